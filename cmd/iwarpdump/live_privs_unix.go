//go:build unix

package main

import (
	"os/user"
	"strconv"
	"syscall"
)

// dropPrivileges switches to the user name (and its primary and
// supplementary groups), as tcpdump -Z does after opening the capture:
// initgroups, setgid, then setuid. Go applies these to every thread.
func dropPrivileges(name string) error {
	u, err := user.Lookup(name)
	if err != nil {
		return err
	}
	uid, err := strconv.Atoi(u.Uid)
	if err != nil {
		return err
	}
	gid, err := strconv.Atoi(u.Gid)
	if err != nil {
		return err
	}
	groups := []int{gid}
	if ids, err := u.GroupIds(); err == nil {
		for _, s := range ids {
			if g, err := strconv.Atoi(s); err == nil && g != gid {
				groups = append(groups, g)
			}
		}
	}
	if err := syscall.Setgroups(groups); err != nil {
		return err
	}
	if err := syscall.Setgid(gid); err != nil {
		return err
	}
	return syscall.Setuid(uid)
}
