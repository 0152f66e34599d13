//go:build unix

package parquetout_test

import (
	"os"
	"syscall"
	"testing"

	"github.com/iwarpkit/iwarpkit/parquetout"
)

// TestFileMode: the table files get the mode os.Create would give them
// (0666 less the umask), not a temporary file's 0600: other users (a
// Spark job, a notebook) can read them as they can read a capture.
func TestFileMode(t *testing.T) {
	for _, umask := range []int{0o022, 0o077} {
		old := syscall.Umask(umask)
		dir := t.TempDir()
		s, err := parquetout.Create(dir, "m", parquetout.Options{})
		if err == nil {
			err = s.Close()
		}
		syscall.Umask(old)
		if err != nil {
			t.Fatal(err)
		}
		for _, tbl := range parquetout.Tables {
			fi, err := os.Stat(parquetout.Path(dir, tbl, "m"))
			if err != nil {
				t.Fatal(err)
			}
			if want := os.FileMode(0o666 &^ umask); fi.Mode().Perm() != want {
				t.Errorf("umask %#o: %s has mode %v, want %v", umask, tbl, fi.Mode().Perm(), want)
			}
		}
	}
}
