//go:build !amd64 || purego

package capture

// prefetch does nothing here: see prefetch_amd64.go.
func prefetch(p *byte, n int) {}
