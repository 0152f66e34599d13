package capture

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestReadNoWait: the raw preadv2(RWF_NOWAIT) read that cachedFile makes
// of a file in the page cache reads it, at the file's offset, and advances
// that offset as read(2) does, so that raw and normal reads interleave.
func TestReadNoWait(t *testing.T) {
	want := make([]byte, 3<<20+17)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range want {
		want[i] = byte(r.Uint32())
	}
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, want, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fd := f.Fd()
	got := make([]byte, 0, len(want))
	buf := make([]byte, 1<<20)
	raw := 0
	for i := 0; ; i++ {
		var n int
		if i%3 == 2 {
			// A normal read between raw ones.
			n, err = f.Read(buf[:1000])
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		} else {
			var e syscall.Errno
			n, e = readNoWait(fd, buf)
			if e == syscall.ENOSYS || e == syscall.EOPNOTSUPP || e == syscall.EPERM {
				t.Skipf("preadv2 with RWF_NOWAIT not here (%v): cachedFile reads with read(2)", e)
			}
			if e != 0 {
				t.Fatalf("preadv2 of a file just written: %v", e)
			}
			if n == 0 {
				break
			}
			raw++
		}
		got = append(got, buf[:n]...)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("read %d octets, not the file's %d (or not the same)", len(got), len(want))
	}
	if raw < 3 {
		t.Fatalf("%d raw reads", raw)
	}
}

// TestCachedFile: reading through cachedFile gives the file's octets and
// io.ReadFull's errors, whether its pages are in the page cache or were
// dropped from it (then the raw read gives EAGAIN and f.Read reads on).
func TestCachedFile(t *testing.T) {
	want := make([]byte, 5<<20+3)
	r := rand.New(rand.NewPCG(3, 4))
	for i := range want {
		want[i] = byte(r.Uint32())
	}
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, want, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, drop := range []bool{false, true} {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if drop {
			if err := f.Sync(); err != nil {
				t.Fatal(err)
			}
			if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
				t.Log(err)
			}
		}
		c := newCachedFile(f)
		defer func() {
			// Cached, the reads are raw ones (the point of cachedFile),
			// where the kernel has RWF_NOWAIT (TestReadNoWait skips
			// otherwise).
			if !drop && !c.noRaw && c.raw == 0 {
				t.Error("a cached file read without a raw read")
			}
		}()
		var got []byte
		buf := make([]byte, 1<<20+5)
		for {
			n, err := io.ReadFull(c, buf)
			got = append(got, buf[:n]...)
			if err == io.ErrUnexpectedEOF {
				if n != len(want)%len(buf) {
					t.Errorf("drop %v: ErrUnexpectedEOF after %d octets", drop, n)
				}
				continue
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		f.Close()
		if !bytes.Equal(got, want) {
			t.Errorf("drop %v: read %d octets, not the file's %d (or not the same)", drop, len(got), len(want))
		}
	}
}

// TestCachedFileNoRaw: on a file system without RWF_NOWAIT (tmpfs gives
// EOPNOTSUPP), the first raw read fails, the file reads with read(2) from
// then on, and reads the same octets; another file's raw reads go on.
func TestCachedFileNoRaw(t *testing.T) {
	want := bytes.Repeat([]byte("0123456789abcdef"), 1<<16)
	dir := "/dev/shm"
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("no %s: %v", dir, err)
	}
	path := filepath.Join(dir, "iwarpkit-cachedfile-"+strconv.Itoa(os.Getpid()))
	if err := os.WriteFile(path, want, 0o644); err != nil {
		t.Skipf("cannot write in %s: %v", dir, err)
	}
	defer os.Remove(path)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c := newCachedFile(f)
	got, err := io.ReadAll(c)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("read %d octets (%v), not the file's %d", len(got), err, len(want))
	}
	var st unix.Statfs_t
	if err := unix.Fstatfs(int(f.Fd()), &st); err == nil && st.Type == unix.TMPFS_MAGIC && !c.noRaw {
		if _, e := readNoWait(c.fd, make([]byte, 1)); e != syscall.EOPNOTSUPP {
			t.Logf("tmpfs raw reads allowed here (%v)", e)
		} else {
			t.Error("tmpfs refuses RWF_NOWAIT, yet raw reads are still on")
		}
	}
}

// TestChunksNotCached: a capture the page cache does not hold (dropped
// with FADV_DONTNEED; its raw reads give EAGAIN and read(2) reads on) comes
// out of a ChunkReader frame for frame as when it is cached, pcap and
// pcapng, in several chunks.
func TestChunksNotCached(t *testing.T) {
	const src = "../testdata/siw/gso_v2_nocrc_ib_write_bw_200000.pcap" // 1 MB
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// Three chunks' worth: the records three times over.
	pcap := filepath.Join(dir, "three.pcap")
	whole := append([]byte(nil), data...)
	for range 2 {
		whole = append(whole, data[24:]...)
	}
	if err := os.WriteFile(pcap, whole, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{pcap, toPcapng(t, pcap, dir)} {
		cached, cerr, ok := chunkFrames(t, path)
		if !ok || len(cached) == 0 {
			t.Fatalf("%s: not chunked, or no frames", path)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
		if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
			t.Log(err)
		}
		f.Close()
		dropped, derr, _ := chunkFrames(t, path)
		if derr != cerr || !slices.Equal(dropped, cached) {
			t.Errorf("%s: %d frames (%q) not cached, %d (%q) cached", filepath.Base(path), len(dropped), derr, len(cached), cerr)
		}
	}
}
