package synth

import "math/rand/v2"

// Independent random streams per connection, so that adding an impairment
// (which draws timing numbers) never changes payload octets or ISNs. The
// second PCG word is the stream id; math/rand/v2's PCG is specified, so the
// numbers are the same on every platform and Go release.
const (
	streamMisc    = 1
	streamPayload = 2
	streamTiming  = 3
)

func newRand(seed int64, conn int, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), uint64(conn)<<8|stream))
}

// between returns a uniform integer in [lo, hi].
func between(r *rand.Rand, lo, hi int) int {
	if hi <= lo {
		return lo
	}
	return lo + r.IntN(hi-lo+1)
}

const textAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,-"

// fillPayload returns size octets: op.Payload repeated, or the pattern.
func fillPayload(r *rand.Rand, op *Op, size int) []byte {
	b := make([]byte, size)
	if op.Payload != nil {
		if len(op.Payload) > 0 {
			for i := 0; i < size; i += len(op.Payload) {
				copy(b[i:], op.Payload)
			}
		}
		return b
	}
	switch op.Pattern {
	case PatternCounter:
		for i := range b {
			b[i] = byte(i)
		}
	case PatternZero:
	case PatternText:
		for i := range b {
			b[i] = textAlphabet[r.IntN(len(textAlphabet))]
		}
	default:
		for i := 0; i < size; i += 8 {
			v := r.Uint64()
			for j := 0; j < 8 && i+j < size; j++ {
				b[i+j] = byte(v >> (8 * j))
			}
		}
	}
	return b
}
