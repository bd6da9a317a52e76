package jobs

import (
	"errors"
	"testing"
)

func TestDeviceRotational(t *testing.T) {
	const sys = "testdata/sysfs"
	tests := []struct {
		name         string
		major, minor uint32
		rot          bool
		why          string
		err          bool
	}{
		{"disk hdd", 8, 0, true, "sda rotational=1", false},
		{"disk ssd", 8, 16, false, "sdb rotational=0", false},
		{"partition of hdd", 8, 1, true, "sda1 → sda rotational=1", false},
		{"nvme partition", 259, 1, false, "nvme0n1p1 → nvme0n1 rotational=0", false},
		{"dm on hdd partition", 253, 0, true, "dm-0 → [sda1 → sda rotational=1]", false},
		{"dm on nvme", 253, 1, false, "dm-1 → [nvme0n1p1 → nvme0n1 rotational=0]", false},
		{"md with one hdd", 9, 0, true, "md0 → [nvme0n1p1 → nvme0n1 rotational=0, sdc rotational=1]", false},
		{"dm on md with hdd", 253, 2, true, "dm-2 → [md0 → [nvme0n1p1 → nvme0n1 rotational=0, sdc rotational=1]]", false},
		{"dm on md of ssds", 253, 3, false, "dm-3 → [md1 → [nvme0n1p1 → nvme0n1 rotational=0, sdb1 → sdb rotational=0]]", false},
		{"dm on unknown slave", 253, 4, false, "", true},
		{"bad rotational value", 254, 0, false, "", true},
		{"no queue", 8, 64, false, "", true},
		{"anonymous device (btrfs, overlay)", 0, 45, false, "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rot, why, err := DeviceRotational(sys, tc.major, tc.minor)
			if tc.err {
				if !errors.Is(err, ErrUnknownDevice) {
					t.Fatalf("err = %v, want ErrUnknownDevice", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if rot != tc.rot || why != tc.why {
				t.Errorf("got %v %q, want %v %q", rot, why, tc.rot, tc.why)
			}
		})
	}
}

func TestPathRotationalNoSysfs(t *testing.T) {
	_, _, err := PathRotational(t.TempDir(), ".")
	if !errors.Is(err, ErrUnknownDevice) {
		t.Fatalf("err = %v, want ErrUnknownDevice", err)
	}
}
