#!/usr/bin/env bash
#
# netns-hosts.sh - hosts of the lab's own on this machine, for HOSTS= (issue 28): network namespaces
# on one bridge, each with an sshd of its own that takes only a key made for this set, and an Ansible
# inventory that places the lab's roles on them. What the bench does over ssh to these is what it
# does to real machines; only the CPUs, the disk and /proc are the one box's (say so when you quote
# their figures).
#
# USAGE: bench/tools/netns-hosts.sh up DIR [--cpusets "app=1 rest=0"]   5 hosts: app, backend, db, 2 load
#        bench/tools/netns-hosts.sh down DIR                            every namespace, sshd and process of DIR's set
#
# up writes DIR/inventory.ini (groups app, backend, db, loadgen; `cpus` per host from --cpusets, as
# CPUSETS names them), DIR/id_ed25519 (the client key), DIR/known_hosts and DIR/hosts.env (what down
# needs), and prints the inventory's path. The addresses are 10.213.N.11-15 on a bridge 10.213.N.1,
# N free on this machine. down kills only what is inside the set's namespaces (the sshds it started,
# and whatever a run left there), then deletes them and the bridge. Needs root, iproute2, and
# openssh-server (installed with apt-get when missing).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
ROLES=(app backend db loadgen loadgen)

usage() { sed -n '9,10p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
die() { echo "ERROR: $*" >&2; exit 1; }

cmd=${1:-}; dir=${2:-}
[[ -n "$cmd" && -n "$dir" ]] || usage
shift 2

down() {
    local env="$1/hosts.env"
    [[ -f "$env" ]] || return 0
    local BRIDGE="" NAMESPACES="" pids ns
    # shellcheck disable=SC1090
    source "$env"
    for ns in $NAMESPACES; do
        if ip netns list | grep -qw "$ns"; then
            # What runs in one of our namespaces was started there by us (its sshd, or a role a run left).
            mapfile -t pids < <(ip netns pids "$ns" 2>/dev/null)
            if ((${#pids[@]})); then kill -TERM "${pids[@]}" 2>/dev/null || true; fi
            for _ in 1 2 3 4 5 6 7 8 9 10; do
                [[ -z "$(ip netns pids "$ns" 2>/dev/null)" ]] && break
                sleep 0.2
            done
            mapfile -t pids < <(ip netns pids "$ns" 2>/dev/null)
            if ((${#pids[@]})); then kill -KILL "${pids[@]}" 2>/dev/null || true; fi
            ip netns del "$ns"
        fi
    done
    ip link del "$BRIDGE" 2>/dev/null || true
    rm -f "$env"
}

case "$cmd" in
    down)
        down "$dir"
        exit 0
        ;;
    up) ;;
    *) usage ;;
esac

cpusets=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --cpusets) cpusets=${2:-}; shift 2 ;;
        *) echo "ERROR: unknown option $1" >&2; usage ;;
    esac
done

[[ $(id -u) -eq 0 ]] || die "network namespaces need root; run as root, or list real hosts in an inventory of your own"
command -v ip >/dev/null || die "ip not found: apt-get install -y iproute2"
if [[ ! -x /usr/sbin/sshd ]]; then
    command -v apt-get >/dev/null || die "sshd not found: install openssh-server"
    echo "installing openssh-server with apt-get (once)" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssh-server >/dev/null 2>&1 \
        || { DEBIAN_FRONTEND=noninteractive apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssh-server >/dev/null; } \
        || die "apt-get install -y openssh-server failed"
fi
mkdir -p "$dir" /run/sshd
dir=$(cd "$dir" && pwd)
[[ -f "$dir/hosts.env" ]] && die "$dir already holds a set of hosts: run bench/tools/netns-hosts.sh down $dir first"

# A /24 no interface here has yet; the set's names carry it, so that sets never share a name.
n=""
for try in $(seq $(( $$ % 200 + 20 )) 250) $(seq 20 250); do
    if ! ip -o -4 addr | grep -q " 10\.213\.$try\."; then n=$try; break; fi
done
[[ -n "$n" ]] || die "no free 10.213.N.0/24 for the hosts"
bridge="lab${n}br"
namespaces=""
for i in 1 2 3 4 5; do namespaces+="lab${n}h$i "; done
echo "BRIDGE=$bridge NAMESPACES=\"$namespaces\" NET=10.213.$n" > "$dir/hosts.env"
trap 'down "$dir"' ERR

ip link add "$bridge" type bridge
ip addr add "10.213.$n.1/24" dev "$bridge"
ip link set "$bridge" up

ssh-keygen -q -t ed25519 -N '' -C "lab hosts $n" -f "$dir/id_ed25519" <<<y >/dev/null
ssh-keygen -q -t ed25519 -N '' -C "lab host key $n" -f "$dir/ssh_host_ed25519_key" <<<y >/dev/null
cp "$dir/id_ed25519.pub" "$dir/authorized_keys"
: > "$dir/known_hosts"
mkdir -p "$dir/sshd_config.d"
# Like Debian's: drop-ins first (make hosts adds one, lab_sshd_config in the inventory), and no
# ClientAliveInterval (0: a session whose client went silent stays): what the bench's heartbeat is for.
cat > "$dir/sshd_config" <<EOF
Include $dir/sshd_config.d/*.conf
Port 22
HostKey $dir/ssh_host_ed25519_key
AuthorizedKeysFile $dir/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
# make hosts copies files with sftp (Ansible tries sftp, then scp, then a pipe: each miss costs time)
Subsystem sftp internal-sftp
MaxSessions 200
MaxStartups 200:30:400
LogLevel ERROR
EOF

# Every connection a level opens is a file descriptor in its role's process, and roles inherit sshd's limit.
ulimit -n "$(ulimit -Hn)"
i=0
for ns in $namespaces; do
    i=$((i + 1))
    addr="10.213.$n.$((10 + i))"
    ip netns add "$ns"
    ip link add "lab${n}v$i" type veth peer name "lab${n}p$i"
    ip link set "lab${n}p$i" netns "$ns"
    ip link set "lab${n}v$i" master "$bridge" up
    ip -n "$ns" link set lo up
    ip -n "$ns" link set "lab${n}p$i" name eth0
    ip -n "$ns" addr add "$addr/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip netns exec "$ns" sysctl -q -w net.ipv4.ip_local_port_range="1024 65000" >/dev/null
    ip netns exec "$ns" /usr/sbin/sshd -f "$dir/sshd_config" -o "ListenAddress=$addr" -o "PidFile=$dir/sshd-h$i.pid"
    echo "$addr $(cut -d' ' -f1-2 "$dir/ssh_host_ed25519_key.pub")" >> "$dir/known_hosts"
done

# CPUSETS' form ("app=1 rest=0") as each host's `cpus`.
cpus_of() {
    local role=$1 item rest=""
    for item in $cpusets; do
        [[ "${item%%=*}" == "$role" ]] && { echo "${item#*=}"; return; }
        [[ "${item%%=*}" == rest ]] && rest=${item#*=}
    done
    echo "$rest"
}
{
    echo "# Made by bench/tools/netns-hosts.sh up $dir: 5 network namespaces on bridge $bridge (10.213.$n.1)."
    echo "# Undo with: bench/tools/netns-hosts.sh down $dir"
    i=0
    for role in app backend db loadgen; do
        echo "[$role]"
        for j in 1 2 3 4 5; do
            [[ "${ROLES[$((j - 1))]}" == "$role" ]] || continue
            c=$(cpus_of "$role")
            echo "h$j ansible_host=10.213.$n.$((10 + j))${c:+ cpus=$c} lab_sshd_pid_file=$dir/sshd-h$j.pid"
        done
        echo
    done
    echo "[all:vars]"
    echo "ansible_user=root"
    echo "ansible_ssh_private_key_file=$dir/id_ed25519"
    echo "ansible_ssh_common_args='-o UserKnownHostsFile=$dir/known_hosts'"
    echo "# make hosts: this set's sshd configuration (each host's own pid file, above), not this machine's"
    echo "lab_sshd_config=$dir/sshd_config"
    echo "# the repository on every host (these share this machine's disk)"
    echo "lab_dir=$ROOT"
} > "$dir/inventory.ini"

# Up when each sshd answers.
for j in 1 2 3 4 5; do
    ok=""
    for _ in $(seq 1 50); do
        if ssh -o BatchMode=yes -o ConnectTimeout=2 -o UserKnownHostsFile="$dir/known_hosts" -i "$dir/id_ed25519" \
               "root@10.213.$n.$((10 + j))" true 2>/dev/null; then ok=1; break; fi
        sleep 0.1
    done
    [[ -n "$ok" ]] || { down "$dir"; die "the sshd of host h$j (10.213.$n.$((10 + j))) did not answer"; }
done
trap - ERR
echo "$dir/inventory.ini"
