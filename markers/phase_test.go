package markers

import (
	"encoding/binary"
	"slices"
	"testing"
)

// fpdu returns the plain octets of an FPDU with the given ULPDU_Length:
// length, ULPDU octets 0xAA, zero PAD, CRC octets 0xCC.
func fpdu(ulpduLen int) []byte {
	pad := (4 - (ulpduLen+2)%4) % 4
	b := make([]byte, 2+ulpduLen+pad+4)
	binary.BigEndian.PutUint16(b, uint16(ulpduLen))
	for i := 2; i < 2+ulpduLen; i++ {
		b[i] = 0xAA
	}
	for i := 2 + ulpduLen + pad; i < len(b); i++ {
		b[i] = 0xCC
	}
	return b
}

// stream returns the wire octets of FPDUs with the given ULPDU length sent
// back to back from the grid origin 0, at least n octets.
func stream(ulpduLen, n int) []byte {
	g := Grid{}
	var wire []byte
	for len(wire) < n {
		wire = g.Insert(wire, fpdu(ulpduLen), uint64(len(wire)))
	}
	return wire
}

// lengthIs returns a plausibility check for FindPhase that reads the
// ULPDU_Length at an FPDU start (after the marker when one starts there).
func lengthIs(data []byte, base uint64, want uint16) func(uint64) bool {
	return func(s uint64) bool {
		i := int(s - base)
		if i+2 > len(data) {
			return false
		}
		l := binary.BigEndian.Uint16(data[i:])
		if l == 0 && i+6 <= len(data) && binary.BigEndian.Uint16(data[i+2:]) == 0 {
			l = binary.BigEndian.Uint16(data[i+4:]) // marker with FPDUPTR 0 first
		}
		return l == want
	}
}

func TestFindPhase(t *testing.T) {
	tests := []struct {
		name     string
		ulpduLen int
		base     int
		n        int
		want     []Candidate
	}{
		{
			// ULPDU 502: 2+502+0+4 = 508 plain octets, so every FPDU is one
			// marker (FPDUPTR 0) plus 508 octets: one grid cell each. Data
			// [600, 2648) holds whole markers at 1024, 1536, 2048, 2560.
			name: "one FPDU per grid cell", ulpduLen: 502, base: 600, n: 2048,
			want: []Candidate{{Grid{Origin: 0}, 4}},
		},
		{
			// ULPDU 94: 100 plain octets. FPDUs start at 0 (with a marker:
			// 104 on the wire), 104, 204, 304, 404, 504 (marker at 512 with
			// FPDUPTR 8), 608, ..., 1008 (marker 1024, FPDUPTR 16), ...,
			// 1512 (marker 1536, FPDUPTR 24), ..., 2016 (marker 2048,
			// FPDUPTR 32). Data [1000, 2200) holds the last three, each
			// pointing to an FPDU start inside the data.
			name: "markers inside FPDUs", ulpduLen: 94, base: 1000, n: 1200,
			want: []Candidate{{Grid{Origin: 0}, 3}},
		},
		{
			// Data [1100, 1700): the marker at 1536 points to 1512, inside
			// the data; that is the only one.
			name: "single marker", ulpduLen: 94, base: 1100, n: 600,
			want: []Candidate{{Grid{Origin: 0}, 1}},
		},
		{
			// Data [1020, 1100): the marker at 1024 points to 1008, before the
			// data, so it cannot be checked.
			name: "pointer before the data", ulpduLen: 94, base: 1020, n: 80,
			want: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wire := stream(tt.ulpduLen, tt.base+tt.n)
			data := wire[tt.base : tt.base+tt.n]
			got := FindPhase(data, uint64(tt.base), lengthIs(data, uint64(tt.base), uint16(tt.ulpduLen)))
			if !slices.Equal(got, tt.want) {
				t.Errorf("FindPhase = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestFindPhaseRanking(t *testing.T) {
	// Zeros look like markers everywhere (Rsvd 0, FPDUPTR 0). Accept only
	// FPDU starts congruent to 5 or 9 modulo 512, and break the run of phase
	// 9 in the middle: phase 5 has 4 agreeing markers in [0, 2048), phase 9
	// has runs of 2 and 1.
	data := make([]byte, 2048)
	data[9+512*2] = 1 // Rsvd of the third phase-9 marker
	plausible := func(s uint64) bool { return s%Interval == 5 || s%Interval == 9 }
	got := FindPhase(data, 0, plausible)
	want := []Candidate{{Grid{Origin: 5}, 4}, {Grid{Origin: 9}, 2}}
	if !slices.Equal(got, want) {
		t.Errorf("FindPhase = %v, want %v", got, want)
	}
	if got := FindPhase(data[:3], 0, nil); got != nil {
		t.Errorf("FindPhase of 3 octets = %v, want nil", got)
	}
}

func TestFindPhaseBase(t *testing.T) {
	// The same octets seen at another base: the phase moves with it.
	// Candidate at data index 0 -> stream offset 1000+0 = 1000, and
	// 1000 mod 512 = 488.
	data := make([]byte, 520)
	for i := range data {
		data[i] = 0xFF
	}
	copy(data[0:], []byte{0, 0, 0, 0})
	copy(data[512:], []byte{0, 0, 0, 0})
	got := FindPhase(data, 1000, nil)
	want := []Candidate{{Grid{Origin: 488}, 2}}
	if !slices.Equal(got, want) {
		t.Errorf("FindPhase = %v, want %v", got, want)
	}
}

func TestFindPhaseDisagree(t *testing.T) {
	// Two candidates 512 apart: marker A at 512 points to 500, marker B at
	// 1024 points to 508. An FPDU starting at 508 would begin inside the FPDU
	// that holds A (it starts before A's end, 516) without being that FPDU,
	// so the two do not agree and the longest run is 1.
	data := make([]byte, 1100)
	for i := range data {
		data[i] = 0xFF
	}
	binary.BigEndian.PutUint32(data[512:], 12)        // FPDUPTR 12 -> 500
	binary.BigEndian.PutUint32(data[1024:], 1024-508) // FPDUPTR 516 -> 508
	got := FindPhase(data, 0, nil)
	want := []Candidate{{Grid{Origin: 0}, 1}}
	if !slices.Equal(got, want) {
		t.Errorf("FindPhase = %v, want %v", got, want)
	}
	// Pointing to the same FPDU agrees.
	binary.BigEndian.PutUint32(data[1024:], 1024-500)
	want = []Candidate{{Grid{Origin: 0}, 2}}
	if got := FindPhase(data, 0, nil); !slices.Equal(got, want) {
		t.Errorf("FindPhase same FPDU = %v, want %v", got, want)
	}
}
