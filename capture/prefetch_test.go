package capture

import "testing"

// TestPrefetch: prefetch takes any length from one octet, lines straddled
// or not, at the start and the end of a buffer, and changes nothing.
func TestPrefetch(t *testing.T) {
	b := make([]byte, 4096)
	for i := range b {
		b[i] = byte(i)
	}
	for _, c := range []struct{ off, n int }{{0, 1}, {0, 63}, {0, 64}, {0, 65}, {1, 2048}, {4095, 1}, {2048, 2048}} {
		prefetch(&b[c.off], c.n)
	}
	for i := range b {
		if b[i] != byte(i) {
			t.Fatalf("octet %d changed", i)
		}
	}
}
