package tempfile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestBeside: the file is new, hidden beside path, and made 0666 less the
// umask, as os.Create makes a file.
func TestBeside(t *testing.T) {
	old := syscall.Umask(0o027)
	defer syscall.Umask(old)
	dir := t.TempDir()
	path := filepath.Join(dir, "out.pcap")
	a, err := Beside(path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Beside(path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if a.Name() == b.Name() || filepath.Dir(a.Name()) != dir || !strings.HasPrefix(filepath.Base(a.Name()), ".out.pcap.tmp-") {
		t.Errorf("names %q, %q", a.Name(), b.Name())
	}
	c, err := os.Create(filepath.Join(dir, "created"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fa, _ := a.Stat()
	fc, _ := c.Stat()
	if fa.Mode() != fc.Mode() || fa.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, os.Create's %v (umask 027: want 0640)", fa.Mode(), fc.Mode())
	}
}
