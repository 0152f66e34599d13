//go:build race

package reassembly

// raceEnabled: the tests run under the race detector, whose sync.Pool
// drops some of what it is given back (allocation counts through a pool
// are not the program's).
const raceEnabled = true
