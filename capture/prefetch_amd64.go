//go:build amd64 && !purego

package capture

// prefetch asks the core to bring the n octets at p (n > 0) into its
// caches without waiting for them (chunks.go, WalkOwned). It is written in
// assembly because Go has no prefetch the compiler keeps: a load whose
// value is not used is dropped, and one whose value is used stalls on the
// miss.
//
//go:noescape
func prefetch(p *byte, n int)
