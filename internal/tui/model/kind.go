package model

import (
	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
	"github.com/iwarpkit/iwarpkit/flows"
)

//go:generate go tool stringer -type=Kind -linecomment -output=kind_string.go

// Kind classifies a record for colouring the list: connection setup (MPA
// Request/Reply, RFC 5044 §7.1), the RDMAP message families of RFC 5040
// §4.1 (Send, Write, Read), Terminate (RFC 5040 §4.8), findings, and the
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
)

// KindOf classifies r. An FPDU whose CRC is bad, or that carries a finding
// of error severity, is a finding; a Terminate stays a Terminate.
func KindOf(r *flows.Record) Kind {
	switch r.Type {
	case flows.RecMPA:
		if hasError(r.MPA.Findings) {
			return KindFinding
		}
		return KindMPA
	case flows.RecFPDU:
		f := r.FPDU
		if !f.SegOK {
			if f.CRCStatus == flows.CRCBad || hasError(f.Findings) {
				return KindFinding
			}
			return KindOther
		}
		k := opcodeKind(f.Seg.Opcode)
		if k != KindTerminate && (f.CRCStatus == flows.CRCBad || hasError(f.Findings)) {
			return KindFinding
		}
		return k
	case flows.RecMessage:
		return opcodeKind(r.Message.Opcode)
	case flows.RecFinding:
		return KindFinding
	case flows.RecConn:
		return KindConn
	}
	return KindOther
}

func hasError(fs []dissect.Finding) bool {
	for _, f := range fs {
		if f.Severity >= dissect.SeverityError {
			return true
		}
	}
	return false
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
