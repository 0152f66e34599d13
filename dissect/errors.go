package dissect

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
)

// Sentinel errors shared by every layer decoder. Callers branch on them with
// errors.Is; the layer packages return them unwrapped on the hot path (no
// allocation) and the pipeline wraps them in a *DecodeError.
var (
	// ErrTruncated: the buffer ends before the header or the length it declares.
	ErrTruncated = errors.New("dissect: truncated")
	// ErrBadLength: a length field holds a value that cannot be right.
	ErrBadLength = errors.New("dissect: impossible length")
	// ErrNotMPA: the octets are not an MPA Request or Reply frame (bad key).
	ErrNotMPA = errors.New("dissect: not an MPA frame")
	// ErrBadCRC: the MPA CRC32c does not match the FPDU.
	ErrBadCRC = errors.New("dissect: bad CRC32c")
	// ErrMarkerMismatch: an MPA marker's FPDUPTR does not point at the FPDU it sits in.
	ErrMarkerMismatch = errors.New("dissect: marker FPDUPTR mismatch")
	// ErrUnknownOpcode: an RDMAP opcode that no supported RFC defines.
	ErrUnknownOpcode = errors.New("dissect: unknown RDMAP opcode")
	// ErrBadVersion: a DDP or RDMAP version this decoder does not know.
	ErrBadVersion = errors.New("dissect: unknown version")
)

// Layer names the protocol layer a DecodeError or Finding concerns.
type Layer uint8

// Layers, bottom up.
const (
	LayerNone Layer = iota
	LayerLink
	LayerIP
	LayerTCP
	LayerMPA
	LayerDDP
	LayerRDMAP
)

var layerNames = [...]string{"none", "link", "ip", "tcp", "mpa", "ddp", "rdmap"}

// String returns the lowercase layer name.
func (l Layer) String() string {
	if int(l) < len(layerNames) {
		return layerNames[l]
	}
	return "layer(" + strconv.Itoa(int(l)) + ")"
}

// DecodeError is the one structured error of the decoders: which layer failed,
// in which frame (1-based, 0 when unknown), at which octet offset of the
// data handed to that layer, and why (Err, usually one of the sentinels).
// Data optionally holds the octets around the failure for %+v.
type DecodeError struct {
	Layer  Layer
	Frame  uint64
	Offset int
	Err    error
	Data   []byte
}

// Error implements error: "mpa: frame 12 offset 4: dissect: truncated".
func (e *DecodeError) Error() string {
	b := make([]byte, 0, 64)
	b = append(b, e.Layer.String()...)
	b = append(b, ':')
	if e.Frame != 0 {
		b = append(b, " frame "...)
		b = strconv.AppendUint(b, e.Frame, 10)
	}
	b = append(b, " offset "...)
	b = strconv.AppendInt(b, int64(e.Offset), 10)
	b = append(b, ": "...)
	if e.Err != nil {
		b = append(b, e.Err.Error()...)
	}
	return string(b)
}

// Unwrap returns the underlying cause, so errors.Is(err, ErrTruncated) works.
func (e *DecodeError) Unwrap() error { return e.Err }

// Format prints the plain message for %v and %s, and adds a hex dump of Data
// for %+v.
func (e *DecodeError) Format(f fmt.State, verb rune) {
	_, _ = f.Write([]byte(e.Error()))
	if verb == 'v' && f.Flag('+') && len(e.Data) > 0 {
		_, _ = f.Write([]byte("\n"))
		_, _ = f.Write([]byte(hex.Dump(e.Data)))
	}
}
