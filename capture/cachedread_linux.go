package capture

import (
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// cachedFile reads a regular file for a ChunkReader: what the page cache
// already holds is read with preadv2(2) and RWF_NOWAIT (Linux 4.14), which
// never waits for the disk, as a raw system call, and the rest with
// f.Read.
//
// Why: under iwarpdump -j N the reading goroutine shares GOMAXPROCS
// processors with N busy workers. A read(2) of a 1 MiB chunk from the page
// cache takes some 50-90 µs, long enough for the runtime's monitor to hand
// the reader's processor to a worker and wake another thread for it; the
// read then returns to no processor, parks its thread, and waits runnable,
// three threads time-sliced on two cores meanwhile. A raw call keeps the
// processor: the copy, which cannot block, finishes on it and the reader
// goes on. On issue 6's workload (512 MiB, 2 cores) that took -j 2 from
// 0.0923 to 0.0907 s (25 interleaved rounds, paired median 3.7 % less),
// and 12-26 ms of CPU off the run's 0.18-0.19 s under perf stat.
//
// A page not in the cache gives EAGAIN and a short or no read; a kernel
// or file system without RWF_NOWAIT, or a sandbox that forbids preadv2,
// an error: f.Read reads on, as a normal system call, which the runtime
// may hand off while the disk works. Those errors turn the raw reads off
// for the file (a file on tmpfs gives EOPNOTSUPP), so it pays one failed
// call, not one a chunk.
type cachedFile struct {
	f     *os.File
	fd    uintptr
	noRaw bool // preadv2 with RWF_NOWAIT failed otherwise than for a page not cached
	raw   int  // reads the raw call made (the tests check the path is taken)
}

func newCachedFile(f *os.File) *cachedFile {
	return &cachedFile{f: f, fd: f.Fd()}
}

// Read reads at most len(p) octets at the file's offset, as f.Read does.
func (c *cachedFile) Read(p []byte) (int, error) {
	if len(p) > 0 && !c.noRaw {
		n, e := readNoWait(c.fd, p)
		switch e {
		case 0:
			if n > 0 {
				c.raw++
				return n, nil
			}
			// The end of the file: f.Read says io.EOF.
		case syscall.EAGAIN, syscall.EINTR:
			// A page not in the cache, or a signal.
		case syscall.ENOSYS, syscall.EOPNOTSUPP, syscall.EINVAL, syscall.EPERM:
			c.noRaw = true
		}
	}
	return c.f.Read(p)
}

// readNoWait reads into p at fd's offset, which it advances, what the
// page cache holds: preadv2(fd, p, offset -1, RWF_NOWAIT), a raw system
// call.
func readNoWait(fd uintptr, p []byte) (int, syscall.Errno) {
	iov := unix.Iovec{Base: &p[0]}
	iov.SetLen(len(p))
	n, _, e := unix.RawSyscall6(unix.SYS_PREADV2, fd, uintptr(unsafe.Pointer(&iov)), 1, ^uintptr(0), 0, unix.RWF_NOWAIT)
	return int(n), e
}
