#!/usr/bin/env bash
# Creates (or with --remove, removes) the device node UCX needs to use braid0.
#
# UCX (1.13) lists an ibverbs device only when /dev/infiniband/<dev_name>
# is a character device the process may read and write (stat + access; it
# never opens it: libbraid-verbs.so answers ibv_open_device). braid0's
# dev_name is uverbs-braid0, so this makes /dev/infiniband/uverbs-braid0:
# a character node with /dev/null's numbers (1:3), mode 0666. Anything that
# does open it gets /dev/null, never a real RDMA device.
#
# usage: braid0-node.sh [--remove | --check] [DEVICE]
#   DEVICE     the braid verbs device name (default braid0)
#   (none)     create the node; nothing to do when it is already there
#   --remove   remove the node, and /dev/infiniband when that leaves it empty
#   --check    exit 0 when the node is present and is braid's, 1 otherwise
# A path that exists but is not braid's node (another file type or device
# numbers) is never touched: the script stops with an error. Creating and
# removing need root (CAP_MKNOD); --check does not.
set -euo pipefail

readonly DIR=/dev/infiniband
readonly MAJOR=1 MINOR=3 # /dev/null's numbers

die() {
  echo "braid0-node: $*" >&2
  exit 1
}

mode=create
dev=braid0
for arg in "$@"; do
  case $arg in
    --remove) mode=remove ;;
    --check) mode=check ;;
    -h | --help)
      sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
      exit 0
      ;;
    -*) die "unknown option '$arg' (expected --remove, --check or a device name)" ;;
    *) dev=$arg ;;
  esac
done
[[ $dev =~ ^[A-Za-z0-9_.-]+$ ]] ||
  die "device name '$dev' is invalid: expected letters, digits, '_', '.', '-'"
node=$DIR/uverbs-$dev

# Whether $node is braid's node: a character device with numbers 1:3.
is_ours() {
  [[ -c $node ]] && [[ $(stat -c '%Hr:%Lr' "$node") == "$MAJOR:$MINOR" ]]
}

# Describes what is at $node, for an error message.
describe() {
  stat -c '%F, device %Hr:%Lr, mode %a, owner %U' "$node" 2>/dev/null ||
    echo "unreadable"
}

need_root() {
  [[ $(id -u) -eq 0 ]] ||
    die "$1 $node needs root; run: sudo $0 $2"
}

case $mode in
  check)
    if is_ours; then
      echo "braid0-node: $node is present"
      exit 0
    fi
    if [[ -e $node || -L $node ]]; then
      echo "braid0-node: $node exists but is not braid's node ($(describe))" >&2
    else
      echo "braid0-node: $node is absent" >&2
    fi
    exit 1
    ;;
  create)
    if is_ours; then
      echo "braid0-node: $node already present"
      exit 0
    fi
    if [[ -e $node || -L $node ]]; then
      die "$node exists and is not braid's node ($(describe)); left as it is"
    fi
    need_root "creating" "$dev"
    if [[ ! -d $DIR ]]; then
      [[ -e $DIR || -L $DIR ]] && die "$DIR exists and is not a directory"
      mkdir -m 0755 "$DIR" || die "cannot create directory $DIR"
    fi
    mknod -m 0666 "$node" c $MAJOR $MINOR || die "mknod $node c $MAJOR $MINOR failed"
    # mknod's mode is filtered by the umask; set it exactly.
    chmod 0666 "$node" || die "chmod 0666 $node failed"
    echo "braid0-node: created $node (char $MAJOR:$MINOR, mode 0666)"
    ;;
  remove)
    if [[ ! -e $node && ! -L $node ]]; then
      echo "braid0-node: $node is absent; nothing to remove"
      exit 0
    fi
    is_ours || die "$node is not braid's node ($(describe)); left as it is"
    need_root "removing" "--remove $dev"
    rm -f "$node" || die "cannot remove $node"
    echo "braid0-node: removed $node"
    # The directory goes only when nothing else is in it.
    if rmdir "$DIR" 2>/dev/null; then
      echo "braid0-node: removed empty $DIR"
    fi
    ;;
esac
