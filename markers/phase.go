package markers

import (
	"cmp"
	"encoding/binary"
	"slices"
)

// Candidate is one possible marker grid found by [FindPhase], with the
// length of the longest run of consecutive markers, 512 octets apart, that
// agree with it.
type Candidate struct {
	Grid      Grid
	Confirmed int
}

// FindPhase looks for the marker grid of a stream whose start (and so the
// MPA handshake that fixes the grid origin) was not captured (RFC 5044 §5.1;
// PROTOCOL.md A.6). data holds captured in-order octets starting at stream
// offset base.
//
// Every offset p of data (not only 4-aligned ones: the grid is aligned to the
// FPDU stream, not to the capture) is a candidate marker when its four
// octets read Rsvd 0 and an FPDUPTR that is a multiple of 4 and points back
// into data (p - FPDUPTR >= base), and plausible accepts that FPDU start
// (plausible may be nil: every start is then accepted). When FPDUPTR is 0
// the FPDU starts with the marker itself, so its ULPDU_Length follows at
// fpduStart+4. Candidates 512 octets apart agree when the later one points
// to the same FPDU or to one starting after the earlier marker.
//
// FindPhase returns one [Candidate] per phase (stream offset modulo 512) that
// has at least one candidate marker, ranked by Confirmed (the longest run of
// agreeing consecutive markers), best first, ties by Origin. A phase is only
// worth trusting with Confirmed >= 2, which needs more than 512 octets of
// data. The returned Grid's Origin is the smallest offset of the phase: the
// true origin lies before base and cannot be known, but every origin of the
// same phase at or before base places the same markers in data.
func FindPhase(data []byte, base uint64, plausible func(fpduStart uint64) bool) []Candidate {
	var out []Candidate
	for ph := 0; ph < Interval && ph+Size <= len(data); ph++ {
		best, run := 0, 0
		var prevStart, prevPos uint64
		for i := ph; i+Size <= len(data); i += Interval {
			s, ok := candidateAt(data, i, base, plausible)
			if !ok {
				run = 0
				continue
			}
			pos := base + uint64(i)
			if run > 0 && s != prevStart && s < prevPos+Size {
				run = 0 // points into the FPDU of the previous marker
			}
			run++
			prevStart, prevPos = s, pos
			best = max(best, run)
		}
		if best > 0 {
			out = append(out, Candidate{Grid: Grid{Origin: (base + uint64(ph)) % Interval}, Confirmed: best})
		}
	}
	slices.SortFunc(out, func(a, b Candidate) int {
		if c := cmp.Compare(b.Confirmed, a.Confirmed); c != 0 {
			return c
		}
		return cmp.Compare(a.Grid.Origin, b.Grid.Origin)
	})
	return out
}

// candidateAt reports whether the four octets at data[i:] look like a marker
// and, if so, the FPDU start it points to.
func candidateAt(data []byte, i int, base uint64, plausible func(uint64) bool) (uint64, bool) {
	if i < 0 || i+Size > len(data) {
		return 0, false
	}
	if binary.BigEndian.Uint16(data[i:]) != 0 {
		return 0, false
	}
	ptr := int(binary.BigEndian.Uint16(data[i+2:]))
	if ptr%4 != 0 || ptr > i {
		return 0, false
	}
	s := base + uint64(i-ptr)
	if plausible != nil && !plausible(s) {
		return 0, false
	}
	return s, true
}
