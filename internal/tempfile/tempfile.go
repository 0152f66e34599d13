// Package tempfile creates the hidden files that output is written to
// before it is renamed into place (Parquet tables, split's shards), with
// the mode os.Create gives (0666 less the umask). os.CreateTemp makes
// them 0600, and a file renamed into place keeps that mode: readable by
// no one but the user who wrote it, where a capture tcpdump or iwarpdump
// -w writes is readable by whoever may read the directory.
package tempfile

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// Beside creates a new file in path's directory, named "." + path's base
// name + ".tmp-" + the process ID and a random suffix, for path's octets
// until they are renamed to path.
func Beside(path string) (*os.File, error) {
	dir, base := filepath.Split(path)
	for try := 0; ; try++ {
		name := filepath.Join(dir, "."+base+".tmp-"+strconv.Itoa(os.Getpid())+"-"+strconv.FormatUint(rand.Uint64(), 36))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if err == nil || !errors.Is(err, os.ErrExist) || try == 100 {
			return f, err
		}
	}
}
