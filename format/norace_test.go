//go:build !race

package format

// raceEnabled: the tests run under the race detector (race_test.go).
const raceEnabled = false
