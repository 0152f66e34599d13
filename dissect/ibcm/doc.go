// Package ibcm is the wire format of InfiniBand Communication Management
// (IBA Vol. 1 chapter 12, "CM") as RDMA connections are set up over RoCEv2
// (IBA Annex A17: UDP destination port 4791) and over native InfiniBand:
//
//   - the transport headers in front of a management datagram: the Local
//     Route Header and Global Route Header of native InfiniBand ([LRH],
//     [GRH]), the Base Transport Header ([BTH], IBA §9.2) and the Datagram
//     Extended Transport Header ([DETH], IBA §9.3.3), and the RoCEv2
//     invariant CRC ([ICRCv2], IBA Annex A17 §A17.4.4);
//   - the common MAD header ([MAD], IBA §13.4.3) of management class 0x07;
//   - the CM messages REQ, MRA, REJ, REP, RTU, DREQ, DREP, LAP, APR,
//     SIDR_REQ and SIDR_REP ([Message], IBA §12.6 Tables 106-120), every
//     fixed field decoded;
//   - the service ID read in the IP-based form of IBA Annex A11 ("RDMA IP CM
//     Service"): port space and port, with the name of the well-known
//     service on that port ([ServiceID]);
//   - the REJ reason codes with their names ([RejectReason], IBA §12.6.7.2
//     Table 109);
//   - the private data conventions: the IP CM header that Linux rdma_cm and
//     every deployed stack put at the start of a REQ's private data
//     ([IPCMHeader], Annex A11), and the Hello/HelloAck proposal of the
//     openib-general list (seed 002: [Hello], [HelloAck]), chosen by the
//     service ID as [PDKindFor] says.
//
// Byte offsets follow the tables of IBA Vol. 1 §12.6 as Linux
// include/rdma/ibta_vol1_c12.h transcribes them; they were checked against
// real RoCEv2 captures of the Linux rxe driver (testdata/rxe) and against
// Wireshark's InfiniBand dissector.
//
// # Design goals
//
// Zero copy: [Message.PrivateData] aliases the input. Keep the input alive
// and unchanged while you use it, or copy what you keep.
//
// Zero allocation: [DecodeRoCE], [DecodeIB], [DecodeMessage] and the header
// decoders allocate nothing (tested with testing.AllocsPerRun). They never
// panic, never read past the slice, and return the sentinels of package
// dissect ([dissect.ErrTruncated], [dissect.ErrBadVersion]) or of this
// package ([ErrNotCM], [ErrUnknownAttribute]) unwrapped. The Check methods
// build findings with text and may allocate; they are for reports.
//
// Encoders ([AppendRoCE], [AppendMessage], ...) write every field the
// decoders read, so that decoding what they wrote gives the same value
// back.
//
// No state: exchanges of one connection (REQ, REP, RTU, ...) are tied
// together by communication ID in package flows.
package ibcm
