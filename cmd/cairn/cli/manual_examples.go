package cli

import (
	"strings"

	"github.com/spf13/cobra"
)

// example is one use of a command: what it does and the shell lines.
// Every line that starts with "cairn " is checked against the command
// tree (manual_test.go): the command, its flags and its argument count.
type example struct{ what, sh string }

// examples are each command's EXAMPLES (man page) and Examples (--help),
// by command path. A path missing from the tree fails manual_test.go.
var examples = map[string][]example{
	"cairn": {
		{"Create a store, back up a VM's disk and /etc, list the snapshots", "cairn --store /srv/cairn init\n" +
			"export CAIRN_STORE=/srv/cairn\n" +
			"cairn backup --type vm --id 100 disk0.img:/dev/vg0/vm-100-disk-0\n" +
			"cairn backup --type host etc.pxar:/etc\n" +
			"cairn snapshots"},
		{"Browse the backups, then unmount", "cairn mount --daemon /mnt/cairn\n" +
			"ls /mnt/cairn/host/$(hostname -s)/latest/etc.pxar\n" +
			"cairn umount /mnt/cairn"},
	},
	"cairn init": {
		{"A store in /srv/cairn, readable by its owner only", "cairn --store /srv/cairn init"},
		{"A store the members of group backup may read", "cairn --store /srv/cairn init --group backup"},
		{"A store in a bucket, with a 4 GiB local chunk cache", "cairn --store /var/lib/cairn/s3 init --s3 s3://backups/host1 \\\n" +
			"    --endpoint https://s3.example.com --region eu-central-1 --credentials-file /root/.cairn-s3 --cache-size 4G"},
	},
	"cairn backup": {
		{"A VM's disk as an image, with its configuration as a blob", "cairn backup --type vm --id 100 disk0.img:/dev/vg0/vm-100-disk-0 qemu-server.conf.blob:/etc/pve/qemu-server/100.conf"},
		{"A host's root file system (one file system) without caches", "cairn backup --type host root.pxar:/ --exclude '/var/cache/**' --exclude-file /etc/cairn/exclude"},
		{"A database dump from standard input", "pg_dump mydb | cairn backup --type host --id db mydb.img:-"},
		{"Encrypted with a key file", "cairn backup --keyfile /root/cairn.key --type ct --id 101 root.pxar:/var/lib/lxc/101/rootfs"},
	},
	"cairn snapshots": {
		{"Every group and snapshot", "cairn snapshots"},
		{"One group's snapshots, then the groups of a namespace only", "cairn snapshots vm/100\ncairn snapshots --ns site1 --groups"},
		{"The newest snapshot's name, for a script", "cairn snapshots host/web/latest --json | jq -r '.[0].snapshot'"},
	},
	"cairn mount": {
		{"The whole store, in the foreground (Ctrl-C unmounts)", "cairn mount /mnt/cairn"},
		{"In the background, logging to a file; copy an image out sparse", "cairn mount --daemon --log-file /var/log/cairn-mount.log /mnt/cairn\n" +
			"cp --sparse=always /mnt/cairn/vm/100/latest/disk0.img /tmp/disk0.raw\n" +
			"cairn umount /mnt/cairn"},
		{"Start a verify job from the mount", "echo 'start read-threads=2' > /mnt/cairn/.jobs/verify/control\ncat /mnt/cairn/.jobs/verify/status"},
	},
	"cairn umount": {{"Unmount a mount of cairn's", "cairn umount /mnt/cairn"}},
	"cairn restore": {
		{"An image onto a block device, discarding what it does not write", "cairn restore vm/100/latest disk0.img /dev/vg0/vm-100-disk-0 --discard"},
		{"Part of a file archive into a directory", "cairn restore host/web/2024-05-01T10:00:00Z root.pxar /srv/restore --path etc/nginx"},
		{"Only the configuration files, but not the private keys", "cairn restore host/web/latest root.pxar /tmp/r --include /etc --include '*.conf' --exclude /etc/ssl/private"},
		{"A blob to standard output", "cairn restore vm/100/latest qemu-server.conf.blob -"},
	},
	"cairn verify": {
		{"Every snapshot of the store", "cairn verify"},
		{"One group, then only snapshots not verified in the last 30 days", "cairn verify vm/100\ncairn verify --ignore-verified --outdated-after 30"},
	},
	"cairn forget": {
		{"One snapshot, then a whole group (see first what would go)", "cairn forget host/web/2024-05-01T10:00:00Z\ncairn forget --group --dry-run host/old"},
	},
	"cairn prune": {
		{"See what a week of dailies, a month of weeklies and a year of monthlies keep", "cairn prune host/web --keep-daily 7 --keep-weekly 4 --keep-monthly 12 --dry-run"},
		{"Keep the last 3 snapshots of every group of a namespace", "cairn prune --all --ns site1 --keep-last 3"},
	},
	"cairn gc": {
		{"Remove the chunks no snapshot uses (after forget or prune)", "cairn gc"},
		{"Free unused chunks at once, when no backup runs", "cairn gc --atime-cutoff 0"},
		{"Show the last run's report", "cairn gc --status"},
	},
	"cairn serve": {
		{"Run the store's schedules under systemd", "systemctl enable --now cairn-serve"},
		{"Check the configuration, then have the daemon read it again", "cairn serve --check-config --config /etc/cairn/serve.toml && systemctl reload cairn-serve"},
		{"Serve a store in the foreground, mounted beside its jobs", "cairn --store /srv/cairn serve --mount /mnt/cairn --listen 127.0.0.1:9817"},
	},
	"cairn sync": {
		{"Copy every snapshot to a second store on a USB disk", "cairn sync --from /srv/cairn --to /mnt/usb/cairn"},
		{"Keep one group in step, removing what the source forgot", "cairn --store /mnt/usb/cairn sync --from /srv/cairn vm/100 --remove-vanished"},
	},
	"cairn notes": {
		{"Set, then print a snapshot's notes", "cairn notes host/web/latest 'before the upgrade to Debian 13'\ncairn notes host/web/latest"},
		{"Notes from standard input; remove them", "uname -a | cairn notes vm/100/latest -\ncairn notes vm/100/latest ''"},
	},
	"cairn protect":   {{"Keep a snapshot whatever prune says", "cairn protect vm/100/2024-05-01T10:00:00Z"}},
	"cairn unprotect": {{"Let prune and forget remove it again", "cairn unprotect vm/100/2024-05-01T10:00:00Z"}},
	"cairn ls": {
		{"A snapshot's archives", "cairn ls vm/100/latest"},
		{"A directory of a file archive, with user names; a whole subtree", "cairn ls host/web/latest root.pxar etc/nginx -l\ncairn ls host/web/latest root.pxar var/www -R"},
	},
	"cairn find": {
		{"Configuration files changed in the last week", "cairn find host/web/latest root.pxar etc --name '*.conf' --newer 7d"},
		{"Files over 100 MiB, for xargs", "cairn find host/web/latest root.pxar --type f --size +100M -0 | xargs -0 -n1 echo"},
	},
	"cairn cat": {
		{"One file of a file archive", "cairn cat host/web/latest root.pxar etc/nginx/nginx.conf"},
		{"An image to a file, and a blob to the terminal", "cairn cat vm/100/latest disk0.img > /tmp/disk0.raw\ncairn cat vm/100/latest qemu-server.conf.blob"},
	},
	"cairn dump": {
		{"A directory with all its metadata into another host's file system", "cairn dump host/web/latest root.pxar etc | ssh web2 tar -x -p --xattrs --xattrs-include='*' --acls -C /srv/etc-copy"},
	},
	"cairn diff": {
		{"What changed in a file archive since a given backup", "cairn diff host/web/2024-05-01T10:00:00Z host/web/latest root.pxar"},
		{"Also compare the content of files of equal size", "cairn diff host/web/2024-05-01T10:00:00Z host/web/latest root.pxar --content"},
	},
	"cairn du": {
		{"What each snapshot of a group alone costs", "cairn du host/web"},
		{"Groups only, of a namespace", "cairn du --ns site1 --groups"},
	},
	"cairn tape export": {
		{"Make a virtual drive; write a group's snapshots to the pool's tapes", "mkdir -p /srv/tape\ncairn tape export --drive /srv/tape --pool weekly vm/100"},
		{"Only the newest snapshot of each group, on a new media set", "cairn tape export --drive /srv/tape --pool weekly --latest-only --new-set --ns site1"},
	},
	"cairn tape restore": {
		{"The newest media set of a pool into a new store", "cairn --store /srv/restored init\ncairn --store /srv/restored tape restore --drive /srv/tape --pool weekly"},
		{"One snapshot of it", "cairn tape restore --drive /srv/tape --pool weekly vm/100/2024-05-01T10:00:00Z"},
	},
	"cairn tape status":          {{"The drive's tapes and media sets", "cairn tape status --drive /srv/tape"}},
	"cairn tape catalog":         {{"What each tape file holds", "cairn tape catalog --drive /srv/tape"}},
	"cairn tape label":           {{"Label two tapes of 100 GiB for pool weekly", "cairn tape label --drive /srv/tape --pool weekly --tape-size 100G WEEK01 WEEK02"}},
	"cairn tape erase":           {{"Erase a tape and delete it from the virtual drive", "cairn tape erase --drive /srv/tape --remove WEEK01"}},
	"cairn tape rebuild-catalog": {{"Write the catalogs of every tape of the drive anew", "cairn tape rebuild-catalog --drive /srv/tape"}},
	"cairn tape": {
		{"Write a group to tape, then see the tapes and what they hold", "cairn tape export --drive /srv/tape --pool weekly vm/100\n" +
			"cairn tape status --drive /srv/tape\ncairn tape catalog --drive /srv/tape"},
	},
	"cairn key": {{"A key, then an encrypted backup with it", "cairn key create /root/cairn.key\ncairn backup --keyfile /root/cairn.key --type host etc.pxar:/etc"}},
	"cairn key create": {
		{"A key under a passphrase asked on the terminal", "cairn key create /root/cairn.key"},
		{"A key for unattended backups, its passphrase from a file", "cairn key create --password-file /root/.cairn-pass /root/cairn.key"},
	},
	"cairn key show":              {{"The key's fingerprint and kdf", "cairn key show /root/cairn.key"}},
	"cairn key change-passphrase": {{"A new passphrase for the same key", "cairn key change-passphrase /root/cairn.key"}},
	"cairn key paperkey":          {{"The key on paper", "cairn key paperkey /root/cairn.key | lp"}},
	"cairn key create-master":     {{"A master key pair for recovery", "cairn key create-master /root/master"}},
	"cairn key recover": {
		{"The key of a snapshot made with backup --master-pubkey", "cairn key recover --master-key /root/master-private.pem --snapshot vm/100/latest /root/recovered.key"},
	},
	"cairn bench":         {{"Fixed chunks of 4 MiB, as an image's", "cairn bench chunker --fixed 4M /var/tmp/big.file"}},
	"cairn bench chunker": {{"How fast this machine cuts content-defined chunks", "cairn bench chunker --dynamic 4M /var/tmp/big.file"}},
	"cairn version":       {{"The version, as JSON", "cairn version --json"}},
	"cairn gen":           {{"Install the pages for man(1)", "cairn gen man /usr/local/share/man/man1\nmandb -q"}},
	"cairn completion":    {{"Complete cairn's commands and snapshots in this shell", "source <(cairn completion bash)"}},
	"cairn completion bash": {
		{"In the current shell (bash-completion is not needed)", "source <(cairn completion bash)"},
		{"In every new shell", "echo 'source <(cairn completion bash)' >> ~/.bashrc"},
	},
	"cairn completion zsh":        {{"In every new shell", "cairn completion zsh > \"${fpath[1]}/_cairn\""}},
	"cairn completion fish":       {{"In every new shell", "cairn completion fish > ~/.config/fish/completions/cairn.fish"}},
	"cairn completion powershell": {{"In the current shell", "cairn completion powershell | Out-String | Invoke-Expression"}},
	"cairn gen man":               {{"Pages to read with man -l", "cairn gen man /tmp/cairn-man\nman -l /tmp/cairn-man/cairn-backup.1"}},
}

// setExamples gives each command of root's tree its examples.
func setExamples(root *cobra.Command) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if ex := examples[c.CommandPath()]; len(ex) > 0 && c.Example == "" {
			c.Example = exampleText(ex)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// exampleText is the Examples of --help: each example's text as a
// comment above its lines, indented as cobra indents flags.
func exampleText(ex []example) string {
	var b strings.Builder
	for i, e := range ex {
		if i > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString("  # " + e.what)
		for line := range strings.Lines(e.sh) {
			b.WriteString("\n  " + strings.TrimSuffix(line, "\n"))
		}
	}
	return b.String()
}
