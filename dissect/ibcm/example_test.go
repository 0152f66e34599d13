package ibcm_test

import (
	"fmt"
	"net/netip"

	"github.com/iwarpkit/iwarpkit/dissect/ibcm"
)

// A REQ for NVMe-oF over RoCEv2, as Linux rdma_cm sends it, encoded and
// decoded again.
func ExampleDecodeRoCE() {
	src := netip.MustParseAddrPort("198.51.100.2:39835")
	dst := netip.MustParseAddrPort("198.51.100.1:4420")
	req := ibcm.Message{Type: ibcm.MsgREQ, REQ: ibcm.REQ{
		LocalCommID: 0x5d491b2d, ServiceID: ibcm.MakeServiceID(ibcm.PortSpaceTCP, dst.Port()),
		LocalQPN: 0x11, StartingPSN: 0xbc9b26, ResponderResources: 1, InitiatorDepth: 1,
	}}
	req.PrivateData = ibcm.AppendIPCMHeader(nil, ibcm.MakeIPCMHeader(src, dst))
	p := ibcm.NewCMPacket(0, 0x42d1b495d, req)
	udpPayload := ibcm.AppendRoCE(nil, &p)

	got, err := ibcm.DecodeRoCE(udpPayload)
	if err != nil {
		panic(err)
	}
	r := got.Msg.REQ
	fmt.Println(got.Msg.Type, r.ServiceID.Describe(), "QPN", r.LocalQPN, "comm ID", r.LocalCommID)
	pd, _ := ibcm.DecodePrivateData(ibcm.PDKindFor(got.Msg.Type, r.ServiceID), got.Msg.PrivateData)
	fmt.Println(pd.Kind, pd.IPCM.SrcAddr(), pd.IPCM.Port, "->", pd.IPCM.DstAddr())
	// Output:
	// req nvme (tcp port 4420) QPN 17 comm ID 1565072173
	// ip_cm 198.51.100.2 39835 -> 198.51.100.1
}
