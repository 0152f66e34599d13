//go:build unix

package main

import (
	"os"
	"os/user"
	"strconv"
	"syscall"
)

// dropPrivileges switches to the user name (and its primary and
// supplementary groups), as tcpdump -Z does after opening the capture:
// initgroups, setgid, then setuid. Go applies these to every thread.
func dropPrivileges(name string) error {
	u, uid, gid, err := lookupUser(name)
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

// lookupUser returns user name and its uid and primary gid.
func lookupUser(name string) (u *user.User, uid, gid int, err error) {
	if u, err = user.Lookup(name); err != nil {
		return nil, 0, 0, err
	}
	if uid, err = strconv.Atoi(u.Uid); err != nil {
		return nil, 0, 0, err
	}
	if gid, err = strconv.Atoi(u.Gid); err != nil {
		return nil, 0, 0, err
	}
	return u, uid, gid, nil
}

// chownTo gives file path to user name and its primary group, as tcpdump
// -Z does with the -w file it opened before dropping privileges.
func chownTo(path, name string) error {
	_, uid, gid, err := lookupUser(name)
	if err != nil {
		return err
	}
	return os.Chown(path, uid, gid)
}
