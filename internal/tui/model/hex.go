package model

import (
	"strconv"
)

// RawFrame is one frame re-read from the capture file: its octets and
// where its TCP payload is.
type RawFrame struct {
	Frame      uint64
	Data       []byte // the whole frame as captured
	PayloadOff int    // offset of the TCP payload in Data
	Payload    []byte // the TCP payload (a sub-slice of Data)
	Seq        uint32 // TCP sequence number of Payload[0]
	TCP        bool   // the frame carries a decoded TCP segment
}

// HexCell is one octet of the hex pane.
type HexCell struct {
	B     byte
	Class Class
	Hi    bool // part of the selected field
	Valid bool // false: blank (before or after the octets shown)
}

// HexLine is one line of the hex pane: either a frame boundary header
// (Header non-empty) or 16 octets starting at frame offset Off (a multiple
// of 16, as Wireshark numbers them).
type HexLine struct {
	Header string
	Off    int
	Cells  [16]HexCell
}

// BuildHex lays out the octets of a record as its frames carried them. With
// a layout, it shows the record's octets [0, l.Len) frame by frame in
// stream order (the part of each frame that carries them, octets already
// shown by an earlier frame skipped), each part under a header naming the
// frame, and the octets no frame holds as a gap line; octets get the
// layout's classes and those in hi are highlighted. Without a layout it
// shows each frame's TCP payload, or the whole frame when it is not TCP.
func BuildHex(l *Layout, frames []RawFrame, hi []Span) []HexLine {
	var out []HexLine
	if l == nil {
		for _, f := range frames {
			if !f.TCP && len(f.Data) > 0 {
				// Not TCP (RoCE CM over UDP, SCTP): the whole frame.
				out = append(out, HexLine{Header: "frame " + strconv.FormatUint(f.Frame, 10) + ": " +
					strconv.Itoa(len(f.Data)) + " octets"})
				out = appendCells(out, 0, f.Data, func(int) (Class, bool) { return ClassNone, false })
				continue
			}
			if !f.TCP || len(f.Payload) == 0 {
				out = append(out, HexLine{Header: "frame " + strconv.FormatUint(f.Frame, 10) + ": no TCP payload"})
				continue
			}
			out = append(out, HexLine{Header: "frame " + strconv.FormatUint(f.Frame, 10) + ": TCP payload, " +
				strconv.Itoa(len(f.Payload)) + " octets at frame offset " + strconv.Itoa(f.PayloadOff)})
			out = appendCells(out, f.PayloadOff, f.Payload, func(int) (Class, bool) { return ClassNone, false })
		}
		return out
	}
	hiMask := make([]bool, l.Len)
	for _, s := range hi {
		for w := max(s.Start, 0); w < s.End && w < l.Len; w++ {
			hiMask[w] = true
		}
	}
	covered := make([]bool, l.Len)
	for _, f := range frames {
		if !f.TCP {
			continue
		}
		a := int(int32(f.Seq - l.Seq)) // record offset of the payload's first octet
		lo, hi := max(0, a), min(l.Len, a+len(f.Payload))
		for lo < hi {
			for lo < hi && covered[lo] {
				lo++
			}
			end := lo
			for end < hi && !covered[end] {
				covered[end] = true
				end++
			}
			if lo >= end {
				break
			}
			out = append(out, HexLine{Header: "frame " + strconv.FormatUint(f.Frame, 10) + ": octets " +
				strconv.Itoa(lo) + "-" + strconv.Itoa(end-1) + " of " + strconv.Itoa(l.Len) +
				" (seq " + strconv.FormatUint(uint64(l.Seq+uint32(lo)), 10) + ")"})
			base := lo
			out = appendCells(out, f.PayloadOff+(lo-a), f.Payload[lo-a:end-a], func(i int) (Class, bool) {
				return l.Class(base + i), hiMask[base+i]
			})
			lo = end
		}
	}
	for w := 0; w < l.Len; {
		if covered[w] {
			w++
			continue
		}
		e := w
		for e < l.Len && !covered[e] {
			e++
		}
		out = append(out, HexLine{Header: "octets " + strconv.Itoa(w) + "-" + strconv.Itoa(e-1) + " not in the capture"})
		w = e
	}
	return out
}

// appendCells lays out b, whose first octet is at frame offset off, on
// lines of 16 aligned to offsets that are multiples of 16.
func appendCells(out []HexLine, off int, b []byte, class func(i int) (Class, bool)) []HexLine {
	for i := 0; i < len(b); {
		line := HexLine{Off: (off + i) &^ 15}
		for c := (off + i) & 15; c < 16 && i < len(b); c++ {
			cl, h := class(i)
			line.Cells[c] = HexCell{B: b[i], Class: cl, Hi: h, Valid: true}
			i++
		}
		out = append(out, line)
	}
	return out
}
