// Package gc is the garbage collector of a store (the gc job kind): it
// removes the chunk files no snapshot references any more, as Proxmox
// Backup Server does, in two phases: mark (touch the atime of every
// chunk any index references) and sweep (remove chunk files whose atime
// is older than a cutoff).
//
// The safety argument is written out below once the implementation lands.
package gc
