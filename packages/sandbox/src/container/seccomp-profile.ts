/**
 * The sandbox's own seccomp profile, applied when the container is created
 * (`SecurityOpt: ["seccomp=<json>"]`) and read back from inspect (container-spec.ts). Under runc it
 * covers PID 1 and every exec. gVisor ignores it unless runsc is registered with `--oci-seccomp`, and
 * even then filters only the container's first process, never an exec: there each exec installs the
 * same denials itself (syscall-guard.ts).
 *
 * It is Docker's documented default profile (moby's profiles/seccomp/default.json) resolved for what
 * a sandbox always is: a container with no capabilities on a 64-bit engine. The rules Docker grants
 * only with a capability (mount, unshare, setns, bpf, ptrace of others, module loading, ...) are
 * simply absent, and its per-architecture rules kept only for x86_64 and aarch64. On top of that:
 * - Native 64-bit system calls only. A call through the i386 ABI (`int 0x80`) or the x32 ABI is
 *   refused whatever it is (runc kills the calling thread with SIGSYS, libseccomp's bad-architecture
 *   action). No sandbox program needs either ABI, so x32 is not allowed.
 * - io_uring_setup, io_uring_enter and io_uring_register are refused (ENOSYS): a ring makes sockets
 *   (IORING_OP_SOCKET) and opens files without the system calls this profile filters. Docker 20.10
 *   allows them.
 * - socket(AF_VSOCK) is refused (EPERM): on a virtual machine vsock reaches the hypervisor host's
 *   agents, which `network: "none"` does not close. Docker 20.10 allows it (newer Docker refuses it).
 * - Namespaces: clone with any CLONE_NEW* flag, unshare and setns are refused (as Docker does without
 *   CAP_SYS_ADMIN), so a program cannot make a user namespace and hold capabilities in it.
 * Everything not listed gets EPERM (the default action; Docker 20.10 reads no `defaultErrnoRet`,
 * and EPERM is what runc and gVisor return for SCMP_ACT_ERRNO without one). The JSON is about 4.5 kB.
 */

/** System calls allowed with any arguments: Docker's unconditional list, as x86_64 and aarch64 name them. */
const allowedSystemCalls = [
  "accept accept4 access adjtimex alarm arch_prctl bind brk capget capset chdir chmod chown",
  "clock_adjtime clock_getres clock_gettime clock_nanosleep close close_range connect copy_file_range",
  "creat dup dup2 dup3 epoll_create epoll_create1 epoll_ctl epoll_ctl_old epoll_pwait epoll_pwait2",
  "epoll_wait epoll_wait_old eventfd eventfd2 execve execveat exit exit_group faccessat faccessat2",
  "fadvise64 fallocate fanotify_mark fchdir fchmod fchmodat fchown fchownat fcntl fdatasync fgetxattr",
  "flistxattr flock fork fremovexattr fsetxattr fstat fstatfs fsync ftruncate futex futex_waitv",
  "futimesat getcpu getcwd getdents getdents64 getegid geteuid getgid getgroups getitimer getpeername",
  "getpgid getpgrp getpid getppid getpriority getrandom getresgid getresuid getrlimit get_robust_list",
  "getrusage getsid getsockname getsockopt get_thread_area gettid gettimeofday getuid getxattr",
  "inotify_add_watch inotify_init inotify_init1 inotify_rm_watch io_cancel ioctl io_destroy",
  "io_getevents io_pgetevents ioprio_get ioprio_set io_setup io_submit kill landlock_add_rule",
  "landlock_create_ruleset landlock_restrict_self lchown lgetxattr link linkat listen listxattr",
  "llistxattr lremovexattr lseek lsetxattr lstat madvise membarrier memfd_create memfd_secret mincore",
  "mkdir mkdirat mknod mknodat mlock mlock2 mlockall mmap modify_ldt mprotect mq_getsetattr mq_notify",
  "mq_open mq_timedreceive mq_timedsend mq_unlink mremap msgctl msgget msgrcv msgsnd msync munlock",
  "munlockall munmap name_to_handle_at nanosleep newfstatat open openat openat2 pause pidfd_open",
  "pidfd_send_signal pipe pipe2 pkey_alloc pkey_free pkey_mprotect poll ppoll prctl pread64 preadv",
  "preadv2 prlimit64 process_mrelease process_vm_readv process_vm_writev pselect6 ptrace pwrite64",
  "pwritev pwritev2 read readahead readlink readlinkat readv recvfrom recvmmsg recvmsg",
  "remap_file_pages removexattr rename renameat renameat2 restart_syscall rmdir rseq rt_sigaction",
  "rt_sigpending rt_sigprocmask rt_sigqueueinfo rt_sigreturn rt_sigsuspend rt_sigtimedwait",
  "rt_tgsigqueueinfo sched_getaffinity sched_getattr sched_getparam sched_get_priority_max",
  "sched_get_priority_min sched_getscheduler sched_rr_get_interval sched_setaffinity sched_setattr",
  "sched_setparam sched_setscheduler sched_yield seccomp select semctl semget semop semtimedop sendfile",
  "sendmmsg sendmsg sendto setfsgid setfsuid setgid setgroups setitimer setpgid setpriority setregid",
  "setresgid setresuid setreuid setrlimit set_robust_list setsid setsockopt set_thread_area",
  "set_tid_address setuid setxattr shmat shmctl shmdt shmget shutdown sigaltstack signalfd signalfd4",
  "socketpair splice stat statfs statx symlink symlinkat sync sync_file_range syncfs sysinfo tee",
  "tgkill time timer_create timer_delete timer_getoverrun timer_gettime timer_settime timerfd_create",
  "timerfd_gettime timerfd_settime times tkill truncate umask uname unlink unlinkat utime utimensat",
  "utimes vfork vmsplice wait4 waitid write writev",
  // gVisor's name for pselect6 (runsc looks names up in its own table, where 270 is "pselect");
  // libseccomp does not know it and runc skips it. Without it select() fails under gVisor.
  "pselect",
]
  .join(" ")
  .split(" ");

/** Linux's AF_VSOCK address family. */
const addressFamilyVsock = 40;
/** Every namespace flag clone() takes (CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET): 0x7E020000. */
const namespaceFlags = 2114060288;
/** personality() values Docker allows: PER_LINUX, UNAME26, ADDR_NO_RANDOMIZE with each, and the query. */
const personalities = [0, 8, 131072, 131080, 4294967295];
const enosys = 38;

type SeccompRule = {
  names: string[];
  action: "SCMP_ACT_ALLOW" | "SCMP_ACT_ERRNO";
  errnoRet?: number;
  args?: { index: number; value: number; op: "SCMP_CMP_EQ" | "SCMP_CMP_NE" | "SCMP_CMP_MASKED_EQ" }[];
};

/** The profile in Docker's JSON format. */
export const seccompProfile: {
  defaultAction: "SCMP_ACT_ERRNO";
  architectures: string[];
  syscalls: SeccompRule[];
} = {
  defaultAction: "SCMP_ACT_ERRNO",
  architectures: ["SCMP_ARCH_X86_64", "SCMP_ARCH_AARCH64"],
  syscalls: [
    { names: allowedSystemCalls, action: "SCMP_ACT_ALLOW" },
    {
      names: ["socket"],
      action: "SCMP_ACT_ALLOW",
      args: [{ index: 0, value: addressFamilyVsock, op: "SCMP_CMP_NE" }],
    },
    ...personalities.map(
      (value): SeccompRule => ({
        names: ["personality"],
        action: "SCMP_ACT_ALLOW",
        args: [{ index: 0, value, op: "SCMP_CMP_EQ" }],
      }),
    ),
    {
      names: ["clone"],
      action: "SCMP_ACT_ALLOW",
      args: [{ index: 0, value: namespaceFlags, op: "SCMP_CMP_MASKED_EQ" }],
    },
    // glibc falls back to clone when clone3 is missing; clone3's flags cannot be filtered.
    { names: ["clone3"], action: "SCMP_ACT_ERRNO", errnoRet: enosys },
    {
      names: ["io_uring_setup", "io_uring_enter", "io_uring_register"],
      action: "SCMP_ACT_ERRNO",
      errnoRet: enosys,
    },
  ],
};

/** The `SecurityOpt` entry that applies the profile; the engine reports it back unchanged. */
export const seccompSecurityOption = `seccomp=${JSON.stringify(seccompProfile)}`;

/**
 * What is wrong with a container's `SecurityOpt` seccomp entries: empty when it has exactly ours
 * (`expected`: the profile itself, or under Podman the file it was written to).
 */
export function findSeccompProblems(
  securityOptions: string[],
  expected: string = seccompSecurityOption,
): string[] {
  const profiles = securityOptions.filter((option) => /^seccomp[=:]/.test(option));
  if (profiles.length === 0) return ["SecurityOpt has no seccomp profile (Docker's default would apply)"];
  if (profiles.length > 1) return [`SecurityOpt has ${profiles.length} seccomp entries`];
  const profile = profiles[0] as string;
  if (profile === expected) return [];
  const shown = profile.length > 80 ? `${profile.slice(0, 80)}...` : profile;
  return [`the seccomp profile is not the sandbox's own (${shown})`];
}
