package model

import (
	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
	"github.com/iwarpkit/iwarpkit/flows"
)

//go:generate go tool stringer -type=Kind -linecomment -output=kind_string.go

// Kind classifies a record for colouring the list: connection setup (MPA
// Request/Reply, RFC 5044 §7.1; RoCE CM and SCTP session control), the
// RDMAP message families of RFC 5040 §4.1 (Send, Write, Read), Terminate
// (RFC 5040 §4.8), findings of error and of warning severity, and the
// rest.
type Kind uint8

// Record kinds.
const (
	KindOther     Kind = iota // other
	KindMPA                   // mpa
	KindSend                  // send
	KindWrite                 // write
	KindRead                  // read
	KindTerminate             // terminate
	KindFinding               // finding
	KindConn                  // conn
	KindWarning               // warning
)

// KindOf classifies r. A record whose CRC is bad, or that carries a
// finding of error severity, is a finding; one with a warning (and no
// error) a warning; a Terminate stays a Terminate. A DDP segment over
// SCTP is classified by its RDMAP opcode, like an FPDU.
func KindOf(r *flows.Record) Kind {
	sev := Severity(r)
	flag := func(k Kind, crcBad bool) Kind {
		switch {
		case k == KindTerminate:
			return k
		case crcBad || sev >= dissect.SeverityError:
			return KindFinding
		case sev == dissect.SeverityWarning:
			return KindWarning
		}
		return k
	}
	switch r.Type {
	case flows.RecMPA, flows.RecCM, flows.RecSCTPSession:
		return flag(KindMPA, r.Type == flows.RecCM && r.CM != nil && r.CM.ICRCStatus == flows.CRCBad)
	case flows.RecFPDU:
		f := r.FPDU
		if !f.SegOK {
			return flag(KindOther, f.CRCStatus == flows.CRCBad)
		}
		return flag(opcodeKind(f.Seg.Opcode), f.CRCStatus == flows.CRCBad)
	case flows.RecDDPSCTP:
		if r.SCTP == nil || !r.SCTP.SegOK {
			return flag(KindOther, false)
		}
		return flag(opcodeKind(r.SCTP.Seg.Opcode), false)
	case flows.RecMessage:
		return opcodeKind(r.Message.Opcode)
	case flows.RecFinding:
		return flag(KindOther, false)
	case flows.RecConn, flows.RecExtConn:
		return KindConn
	}
	return KindOther
}

// Severity returns the highest severity of the findings r carries (a
// finding record: its own), 0 when it has none.
func Severity(r *flows.Record) dissect.Severity {
	var s dissect.Severity
	if r.Type == flows.RecFinding && r.Finding != nil {
		s = r.Finding.Severity
	}
	for _, f := range attached(r) {
		s = max(s, f.Severity)
	}
	return s
}

// opcodeKind maps an RDMAP opcode (RFC 5040 §4.1 Figure 4, RFC 7306) to
// its family.
func opcodeKind(op rdmap.Opcode) Kind {
	switch op {
	case rdmap.OpSend, rdmap.OpSendInvalidate, rdmap.OpSendSE, rdmap.OpSendSEInvalidate:
		return KindSend
	case rdmap.OpWrite:
		return KindWrite
	case rdmap.OpReadRequest, rdmap.OpReadResponse:
		return KindRead
	case rdmap.OpTerminate:
		return KindTerminate
	}
	return KindOther
}
