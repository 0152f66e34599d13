package ibcm_test

import (
	"bytes"
	"testing"

	"github.com/iwarpkit/iwarpkit/dissect/ibcm"
)

func addSeeds(f *testing.F, wrap func([]byte) []byte) {
	for _, m := range sampleMessages() {
		p := ibcm.NewCMPacket(1, 2, m)
		b := ibcm.AppendRoCE(nil, &p)
		f.Add(wrap(b))
		f.Add(wrap(b[:len(b)/2]))
	}
	for _, path := range []string{"../../testdata/rxe/rxe_v4_rping.pcap", "../../testdata/rxe/rxe_v6_rej_app.pcap"} {
		for _, fr := range readRoCE(f, path) {
			f.Add(wrap(fr.payload))
		}
	}
}

// checkStable asserts the invariants of a decode: an error other than
// ErrUnknownAttribute and ErrNotCM leaves no message type decoded, and a
// successful decode re-encodes stably (encode, decode, encode gives the
// same octets).
func checkStable(t *testing.T, p ibcm.Packet, err error) {
	if err != nil {
		return
	}
	b1 := ibcm.AppendRoCE(nil, &p)
	p2, err := ibcm.DecodeRoCE(b1)
	if err != nil {
		t.Fatalf("re-decode: %v", err)
	}
	if b2 := ibcm.AppendRoCE(nil, &p2); !bytes.Equal(b1, b2) {
		t.Fatalf("unstable encoding\n% x\n% x", b1, b2)
	}
	pd, _ := ibcm.DecodePrivateData(ibcm.PDKindFor(p.Msg.Type, p.Msg.REQ.ServiceID), p.Msg.PrivateData)
	_ = pd.Check(nil)
}

func FuzzDecodeRoCE(f *testing.F) {
	addSeeds(f, func(b []byte) []byte { return b })
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ibcm.DecodeRoCE(b)
		checkStable(t, p, err)
	})
}

func FuzzDecodeIB(f *testing.F) {
	addSeeds(f, func(b []byte) []byte {
		ib := ibcm.AppendLRH(nil, ibcm.LRH{LNH: ibcm.LNHIBAGlobal})
		ib = ibcm.AppendGRH(ib, ibcm.GRH{IPVer: 6, NxtHdr: 0x1B})
		return append(append(ib, b...), 0, 0)
	})
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ibcm.DecodeIB(b)
		checkStable(t, p, err)
	})
}

func FuzzPrivateData(f *testing.F) {
	f.Add(uint8(ibcm.PDIPCM), make([]byte, 92))
	f.Add(uint8(ibcm.PDHello), []byte{0x11, 0x43, 0, 0, 1, 2, 3})
	f.Add(uint8(ibcm.PDHelloAck), []byte{0x11, 0x03, 0, 0})
	f.Fuzz(func(t *testing.T, k uint8, b []byte) {
		pd, err := ibcm.DecodePrivateData(ibcm.PDKind(k%4), b)
		if err != nil && pd.Kind != ibcm.PDRaw {
			t.Fatal("error with a decoded header")
		}
		_ = pd.Check(nil)
		if len(pd.Consumer) > len(b) {
			t.Fatal("consumer data longer than the input")
		}
	})
}
