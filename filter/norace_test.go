//go:build !race

package filter

// raceEnabled: the tests run under the race detector (race_test.go).
const raceEnabled = false
