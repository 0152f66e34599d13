//go:build amd64 && !purego

package crc32c

import (
	"hash/crc32"
	"testing"
)

// TestGenericOnAMD64 runs the comparison with the folding code switched
// off, as on a CPU without AVX-512.
func TestGenericOnAMD64(t *testing.T) {
	saved := hasFold
	hasFold = false
	defer func() { hasFold = saved }()
	p := make([]byte, 3000)
	for i := range p {
		p[i] = byte(i * 31)
	}
	for n := 0; n <= len(p); n += 13 {
		if got, want := Checksum(p[:n]), crc32.Checksum(p[:n], table); got != want {
			t.Fatalf("%d octets: %#08x, want %#08x", n, got, want)
		}
	}
}
