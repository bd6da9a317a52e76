# The side-by-side benchmark's tool adapters (sourced by run.sh): how
# cairn, restic, borg and casync do each step. Every function takes the
# tool first; repositories live in $RUN/repo-TOOL. Archives: the tree
# ($SRC) twice (first and second backup), the sparse ext4 image ($IMG),
# and the incompressible image ($RAND) when RAND_MB > 0.
#   cairn:  groups host/t (go.pxar), host/i and host/r (x.img)
#   restic: tags tree, img, rand
#   borg:   archives t1, t2, i1, r1
#   casync: $R/t1.caidx, t2.caidx, i.caibx, r.caibx over the store $R/store

repo() { echo "$RUN/repo-$1"; }

# tool_na TOOL STEP: why TOOL cannot do STEP (empty: it can).
tool_na() {
  case $1:$2 in
    casync:mount-image | casync:mount-rand | casync:randread)
      echo "casync mkdev needs nbd; no FUSE image mount" ;;
    casync:verify) echo "casync has no verify command" ;;
  esac
}

tool_init() {
  local r; r=$(repo "$1")
  rm -rf "$r"
  case $1 in
    cairn) "$CAIRN" --store "$r" init >/dev/null 2>&1 ;;
    restic) restic init --repo "$r" -q >/dev/null ;;
    borg) borg init -e none "$r" 2>/dev/null ;;
    casync) mkdir -p "$r/store" ;;
  esac
}

# cmd_backup TOOL KIND N: the command (printed, one word a line, for
# mapfile) backing up KIND (tree, img, rand); N is 1 or 2 (second backup).
cmd_backup() {
  local r src id; r=$(repo "$1")
  case $2 in tree) src=$SRC id=t ;; img) src=$IMG id=i ;; rand) src=$RAND id=r ;; esac
  case $1:$2 in
    cairn:tree) printf '%s\n' "$CAIRN" --store "$r" backup --id t --no-sync "go.pxar:$src" ;;
    cairn:*) printf '%s\n' "$CAIRN" --store "$r" backup --id "$id" --no-sync "x.img:$src" ;;
    restic:*) printf '%s\n' restic --repo "$r" -q backup --tag "$2" "$src" ;;
    borg:*) printf '%s\n' borg create "$r::$id$3" "$src" ;;
    casync:tree) printf '%s\n' casync make "--store=$r/store" "$r/t$3.caidx" "$src" ;;
    casync:*) printf '%s\n' casync make "--store=$r/store" "$r/$id.caibx" "$src" ;;
  esac
}

# mount_tool TOOL KIND: mounts TOOL's backup of KIND on $MNT in the
# foreground (so MPID is the daemon doing the work, whose CPU and peak
# RSS benchrun reads) and sets MPATH to the tree or image in it.
mount_tool() {
  local r; r=$(repo "$1")
  mkdir -p "$MNT"
  case $1:$2 in
    cairn:tree) MPATH=$MNT/host/t/latest/go.pxar ;;
    cairn:img) MPATH=$MNT/host/i/latest/x.img ;;
    cairn:rand) MPATH=$MNT/host/r/latest/x.img ;;
    restic:tree) MPATH=$MNT/snapshots/latest$SRC ;;
    restic:img) MPATH=$MNT/snapshots/latest$IMG ;;
    restic:rand) MPATH=$MNT/snapshots/latest$RAND ;;
    borg:tree) MPATH=$MNT$SRC ;;
    borg:img) MPATH=$MNT$IMG ;;
    borg:rand) MPATH=$MNT$RAND ;;
    casync:tree) MPATH=$MNT ;;
  esac
  case $1:$2 in
    cairn:*) "$CAIRN" --store "$r" mount "$MNT" >>"$LOG" 2>&1 & ;;
    restic:*) restic --repo "$r" mount --tag "$2" "$MNT" >>"$LOG" 2>&1 & ;;
    borg:tree) borg mount -f "$r::t2" "$MNT" >>"$LOG" 2>&1 & ;;
    borg:img) borg mount -f "$r::i1" "$MNT" >>"$LOG" 2>&1 & ;;
    borg:rand) borg mount -f "$r::r1" "$MNT" >>"$LOG" 2>&1 & ;;
    casync:tree) casync mount "--store=$r/store" "$r/t2.caidx" "$MNT" >>"$LOG" 2>&1 & ;;
  esac
  MPID=$!
  wait_mounted "$MNT" 60
  local i
  for ((i = 0; i < 100; i++)); do [ -e "$MPATH" ] && return 0; sleep 0.1; done
  echo "$1: $MPATH missing in the mount" >&2
  return 1
}

# unmount_tool: unmounts $MNT and waits for the daemon (killed after 30 s).
unmount_tool() {
  [ -n "${MPID:-}" ] || return 0
  if mountpoint -q "$MNT"; then
    fusermount -u "$MNT" 2>/dev/null || fusermount3 -u "$MNT" 2>/dev/null || umount -l "$MNT" || true
  fi
  local i
  for ((i = 0; i < 300; i++)); do kill -0 "$MPID" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$MPID" 2>/dev/null && { echo "mount daemon $MPID did not exit: killed" >&2; kill -9 "$MPID" || true; }
  wait "$MPID" 2>/dev/null || true
  MPID=
}

# cmd_restore TOOL KIND OUT: the command restoring KIND into the new
# directory OUT; restored_path TOOL KIND OUT: where the tree or image is.
cmd_restore() {
  local r; r=$(repo "$1")
  case $1:$2 in
    cairn:tree) printf '%s\n' "$CAIRN" --store "$r" restore --no-sync host/t go.pxar "$3/t" ;;
    cairn:tree-sync) printf '%s\n' "$CAIRN" --store "$r" restore host/t go.pxar "$3/t" ;;
    cairn:img) printf '%s\n' "$CAIRN" --store "$r" restore --no-sync host/i x.img "$3/x.img" ;;
    restic:*) printf '%s\n' restic --repo "$r" -q restore latest --tag "$2" --target "$3" ;;
    borg:tree) printf '%s\n' borg extract "$r::t2" ;;      # run in OUT
    borg:img) printf '%s\n' borg extract --sparse "$r::i1" ;; # run in OUT
    casync:tree) printf '%s\n' casync extract "--store=$r/store" "$r/t2.caidx" "$3/t" ;;
    casync:img) printf '%s\n' casync extract "--store=$r/store" "$r/i.caibx" "$3/x.img" ;;
  esac
}

restored_path() {
  case $1:$2 in
    cairn:tree* | casync:tree) echo "$3/t" ;;
    cairn:img | casync:img) echo "$3/x.img" ;;
    *:tree) echo "$3$SRC" ;;
    *:img) echo "$3$IMG" ;;
  esac
}

cmd_verify() {
  local r; r=$(repo "$1")
  case $1 in
    cairn) printf '%s\n' "$CAIRN" --store "$r" verify ;;
    restic) printf '%s\n' restic --repo "$r" -q check --read-data ;;
    borg) printf '%s\n' borg check --verify-data "$r" ;;
  esac
}

tool_version() {
  case $1 in
    cairn) echo "cairn $(cd "$ROOT" && git describe --always --dirty 2>/dev/null || echo '?')" ;;
    restic) restic version | head -1 ;;
    borg) borg --version ;;
    casync) echo "casync $(casync --version | head -1 | awk '{print $2}')" ;;
    fio) fio --version ;;
  esac
}
