#!/bin/sh
# The container's entry point. Container engines mount the cgroup controllers read-only; the jail
# makes one cgroup per slot below the container's own, so each mount it uses is remounted
# read-write first (with CAP_SYS_ADMIN, which the jail needs anyway). A remount that fails is
# left as it is: the server then runs no code, and /health names the read-only cgroup.
awk '($3 == "cgroup" && $4 ~ /(^|,)(memory|pids|cpuacct)(,|$)/) || $3 == "cgroup2" { print $2, $4 }' \
  /proc/self/mounts |
  while read -r point options; do
    case ",$options," in
      *,ro,*) mount -o remount,bind,rw "$point" 2>/dev/null ||
                echo "entrypoint: cannot remount $point read-write" >&2 ;;
    esac
  done
exec "$@"
