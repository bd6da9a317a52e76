# The side-by-side benchmark's steps (sourced by run.sh). Each step_X
# TOOL measures one tool once (round $ROUND), checks its result and
# appends one record to $RESULTS; a wrong result is reported at once and
# fails the run at the end (the table says WRONG RESULT).

# measure TOOL STEP [benchrun run flags] -- CMD…: runs CMD under benchrun;
# the record waits in REC for finish. Returns CMD's exit status.
measure() {
  local tool=$1 step=$2 rc=0 x; shift 2
  measure_begin
  REC=$("$BR" run -step "$step" -label "${LABEL[$step]}" -tool "$tool" -round "$ROUND" \
    -bytes "${BYTES[$step]:-0}" -log "$LOG" "$@") || rc=$?
  [ -n "$REC" ] || REC="{\"step\":\"$step\",\"tool\":\"$tool\",\"round\":$ROUND,\"exit\":$rc}"
  x=$(measure_extra)
  [ -z "$x" ] || REC="${REC%\}},$x}"
  return "$rc"
}

# measure_begin, measure_extra: hooks around each measurement, the
# latter printing JSON members for its record (run-s3.sh: the proxy's
# request counts); here nothing.
measure_begin() { :; }
measure_extra() { :; }

# finish OK [REASON] [EXTRA_JSON]: appends REC with "ok" (and EXTRA).
finish() {
  local extra=${3:+,$3}
  if [ "$1" != true ]; then
    FAILED=1
    echo "!!! WRONG: ${REC}: $2" >&2
    echo "!!! last lines of $LOG:" >&2
    tail -5 "$LOG" >&2 || true
  fi
  printf '%s,"ok":%s%s}\n' "${REC%\}}" "$1" "$extra" >>"$RESULTS"
  printf '  %-5s %s\n' "$([ "$1" = true ] && echo ok || echo WRONG)" "$REC" | cut -c1-220
}

na() { # na TOOL STEP REASON
  printf '{"step":"%s","label":"%s","tool":"%s","round":%d,"na":"%s"}\n' \
    "$2" "${LABEL[$2]}" "$1" "$ROUND" "$3" >>"$RESULTS"
}

# same_tree DIR: DIR's manifest equals $SRC's (path, type, mode, size,
# SHA-256 of content, symlink target).
same_tree() {
  "$BR" manifest "$1" >"$RUN/got.manifest" || return 1
  diff -q "$RUN/src.manifest" "$RUN/got.manifest" >/dev/null || {
    diff "$RUN/src.manifest" "$RUN/got.manifest" | head -5 >&2
    return 1
  }
}

# checked TOOL STEP CHECK [benchrun flags…] -- CMD…: measures CMD, then
# finishes its record with the result of CHECK (a function, no arguments).
checked() {
  local tool=$1 step=$2 check=$3; shift 3
  if ! measure "$tool" "$step" "$@"; then finish false "exit status"; return; fi
  if $check; then finish true ok "${EXTRA:-}"; else finish false "$check failed" "${EXTRA:-}"; fi
  EXTRA=
}
exited_ok() { true; } # backups: their data is checked by the rows that read it back

step_backup() { # step_backup TOOL STEP KIND N
  local cmd
  mapfile -t cmd < <(cmd_backup "$1" "$3" "$4")
  checked "$1" "$2" exited_ok -- "${cmd[@]}"
}

step_mount_image() { # step_mount_image TOOL STEP KIND SOURCE
  mount_tool "$1" "$3" || { REC="{\"step\":\"$2\",\"tool\":\"$1\",\"round\":$ROUND,\"exit\":1}"; finish false "mount"; return; }
  drop_caches
  CMPSRC=$4 CMPDST=$MPATH
  checked "$1" "$2" same_bytes -daemon "$MPID" -- dd "if=$MPATH" of=/dev/null bs=1M
  unmount_tool
}
same_bytes() { cmp "$CMPDST" "$CMPSRC"; }

# step_cat: cairn cat of the incompressible image to /dev/null, the
# reference for reads through the mount; checked by a second, untimed cat.
step_cat() {
  drop_caches
  checked "$1" "$2" same_cat -o /dev/null -- "$CAIRN" --store "$(repo cairn)" cat host/r x.img
}
same_cat() { "$CAIRN" --store "$(repo cairn)" cat host/r x.img | cmp - "$RAND"; }

step_mount_tar() {
  mount_tool "$1" tree || { REC="{\"step\":\"$2\",\"tool\":\"$1\",\"round\":$ROUND,\"exit\":1}"; finish false "mount"; return; }
  drop_caches
  # tar writes to a file (GNU tar skips reading files when writing to
  # /dev/null), so that the bytes it read can be checked.
  checked "$1" "$2" same_tar -daemon "$MPID" -C "$MPATH" -o "$RUN/out.tar" -- tar -cf - .
  rm -f "$RUN/out.tar"
  unmount_tool
}
same_tar() {
  "$BR" tarmanifest "$RUN/out.tar" >"$RUN/got.manifest" && cmp -s "$RUN/src.manifest" "$RUN/got.manifest"
}

step_mount_find() {
  mount_tool "$1" tree || { REC="{\"step\":\"$2\",\"tool\":\"$1\",\"round\":$ROUND,\"exit\":1}"; finish false "mount"; return; }
  drop_caches
  checked "$1" "$2" same_paths -daemon "$MPID" -C "$MPATH" -o "$RUN/find.out" -- find .
  unmount_tool
}
same_paths() {
  grep -v '^\.$' "$RUN/find.out" | sed 's|^\./||' | LC_ALL=C sort >"$RUN/got.paths"
  cut -f1 "$RUN/src.manifest" | LC_ALL=C sort | cmp -s - "$RUN/got.paths"
}

step_restore() { # step_restore TOOL STEP KIND
  local cmd out=$OUTFS/$1-$ROUND
  rm -rf "$out"; mkdir -p "$out"
  mapfile -t cmd < <(cmd_restore "$1" "$3" "$out")
  RESTORED=$(restored_path "$1" "$3" "$out")
  drop_caches
  if [ "$3" != img ]; then
    checked "$1" "$2" restored_tree -C "$out" -- "${cmd[@]}"
  else
    CMPSRC=$IMG CMPDST=$RESTORED
    checked "$1" "$2" same_bytes -C "$out" -- "${cmd[@]}"
  fi
  rm -rf "$out"
}
restored_tree() { same_tree "$RESTORED"; }

step_verify() {
  local cmd
  mapfile -t cmd < <(cmd_verify "$1")
  drop_caches
  checked "$1" "$2" exited_ok -- "${cmd[@]}"
}

# step_randread: fio 4 KiB random reads, 4 jobs, O_DIRECT, on the mounted
# image, caches dropped; checked by comparing random 4 KiB blocks read
# through the mount (O_DIRECT) with the source image. Where the mount
# refuses O_DIRECT (EINVAL on open), fio runs buffered with
# POSIX_FADV_RANDOM (fio's default fadvise_hint: no read-ahead) and the
# record's note says so.
step_randread() {
  mount_tool "$1" img || { REC="{\"step\":\"$2\",\"tool\":\"$1\",\"round\":$ROUND,\"exit\":1}"; finish false "mount"; return; }
  local direct=1 note=
  if ! dd "if=$MPATH" of=/dev/null bs=4k count=1 iflag=direct 2>/dev/null; then
    direct=0 note='"note":"O_DIRECT refused: buffered, fadvise RANDOM"'
  fi
  drop_caches
  CMPDST=$MPATH
  if measure "$1" "$2" -daemon "$MPID" -o "$RUN/fio.json" -- fio --name=randread "--filename=$MPATH" \
    --rw=randread --bs=4k --numjobs=4 "--direct=$direct" --readonly --ioengine=psync \
    --time_based "--runtime=$FIO_RUNTIME" --group_reporting --output-format=json; then
    local iops
    if iops=$("$BR" fioiops "$RUN/fio.json") && "$BR" randcmp "$MPATH" "$IMG" >/dev/null; then
      finish true ok "\"iops\":$iops${note:+,$note}"
    else
      finish false "fio output or randcmp"
    fi
  else
    finish false "exit status"
  fi
  unmount_tool
}
