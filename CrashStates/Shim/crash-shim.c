// crash-shim: an LD_PRELOAD library that records every change a process makes to the files
// under one directory, with the bytes written, and every sync, into a trace file.
//
// Environment:
//   CRASH_TRACE_ROOT  the directory whose files are recorded (its subdirectories too)
//   CRASH_TRACE_FILE  the trace to write (outside the root)
//
// Each record is a fixed header followed by its payloads:
//   u32 kind, i32 fd, i64 a, i64 b, u32 length1, u32 length2, then length1 + length2 bytes.
// The explorer (Sources/crash-states/Trace.swift) reads the same layout. Every intercepted call
// runs under one lock, so the order of records is the order in which the calls happened.
//
// What it cannot see it reports instead of ignoring: a shared writable mapping of a recorded
// file, a duplicated descriptor, a hard or symbolic link, an exchange rename. The explorer's
// self-check (replaying the whole trace must rebuild the real files byte for byte) catches
// anything else that escapes it.

#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

enum {
  K_OPEN = 1,      // fd, a = flags; path
  K_WRITE = 2,     // fd, a = offset; data
  K_TRUNCATE = 3,  // fd, a = size
  K_SYNC = 5,      // fd, a = 0 fsync, 1 fdatasync, 2 sync_file_range (not durable), 3 msync
  K_CLOSE = 6,     // fd
  K_RENAME = 7,    // a = flags; old path, new path
  K_UNLINK = 8,    // path
  K_MKDIR = 9,     // path
  K_RMDIR = 10,    // path
  K_MARK = 11,     // text
  K_SYNC_ALL = 13, // sync() or syncfs(): everything durable
  K_UNHANDLED = 14 // text naming what the shim cannot model
};

#define MAX_FDS 65536

static pthread_mutex_t lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static int trace_fd = -1;
static char root[PATH_MAX];
static size_t root_length;
static unsigned char traced[MAX_FDS];
static int fd_flags[MAX_FDS];

// The next definition of a function, found once: `real_open` for `open`.
#define REAL(name) \
  static __typeof__(&name) real_##name; \
  if (!real_##name) real_##name = (__typeof__(&name))dlsym(RTLD_NEXT, #name)

// The fortified entry points glibc's headers call when a mode is not given.
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);

static ssize_t (*raw_write)(int, const void *, size_t);
static int (*raw_open)(const char *, int, ...);

static void write_all(const void *bytes, size_t count) {
  const char *p = bytes;
  while (count > 0) {
    ssize_t n = raw_write(trace_fd, p, count);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      // A trace with a hole would be worse than none.
      static const char message[] = "crash-shim: cannot write the trace\n";
      raw_write(2, message, sizeof message - 1);
      _exit(97);
    }
    p += n;
    count -= (size_t)n;
  }
}

static void record(uint32_t kind, int fd, int64_t a, int64_t b, const void *p1, uint32_t l1, const void *p2,
                   uint32_t l2) {
  if (trace_fd < 0) return;
  unsigned char header[32];
  memcpy(header, &kind, 4);
  memcpy(header + 4, &fd, 4);
  memcpy(header + 8, &a, 8);
  memcpy(header + 16, &b, 8);
  memcpy(header + 24, &l1, 4);
  memcpy(header + 28, &l2, 4);
  write_all(header, sizeof header);
  if (l1) write_all(p1, l1);
  if (l2) write_all(p2, l2);
}

__attribute__((constructor)) static void start(void) {
  raw_write = (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
  raw_open = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
  const char *dir = getenv("CRASH_TRACE_ROOT");
  const char *file = getenv("CRASH_TRACE_FILE");
  if (!dir || !file || !realpath(dir, root)) return;
  root_length = strlen(root);
  trace_fd = raw_open(file, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
}

/// Whether an absolute, resolved path is the root or under it.
static int under_root(const char *path) {
  if (trace_fd < 0) return 0;
  if (strncmp(path, root, root_length) != 0) return 0;
  return path[root_length] == '\0' || path[root_length] == '/';
}

/// The absolute path of `path` relative to `dirfd`, with its parent directory resolved
/// (the last component itself is kept, since it may not exist or may be a link).
static int resolve(int dirfd, const char *path, char *out) {
  char joined[PATH_MAX * 2];
  if (path[0] == '/') {
    snprintf(joined, sizeof joined, "%s", path);
  } else {
    char base[PATH_MAX];
    if (dirfd == AT_FDCWD) {
      if (!getcwd(base, sizeof base)) return -1;
    } else {
      char link[64];
      snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
      ssize_t n = readlink(link, base, sizeof base - 1);
      if (n < 0) return -1;
      base[n] = '\0';
    }
    snprintf(joined, sizeof joined, "%s/%s", base, path);
  }
  size_t length = strlen(joined);
  while (length > 1 && joined[length - 1] == '/') joined[--length] = '\0';
  char *slash = strrchr(joined, '/');
  if (!slash) return -1;
  const char *name = slash + 1;
  char parent[PATH_MAX];
  if (slash == joined) {
    snprintf(parent, sizeof parent, "/");
  } else {
    *slash = '\0';
    if (!realpath(joined, parent)) return -1;
  }
  int written = snprintf(out, PATH_MAX, "%s%s%s", parent, strcmp(parent, "/") == 0 ? "" : "/", name);
  return written >= 0 && written < PATH_MAX ? 0 : -1;
}

static void note_open(int fd, int flags) {
  if (fd < 0 || fd >= MAX_FDS || trace_fd < 0) return;
  char link[64], path[PATH_MAX];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, path, sizeof path - 1);
  traced[fd] = 0;
  if (n < 0) return;
  path[n] = '\0';
  if (!under_root(path)) return;
  traced[fd] = 1;
  fd_flags[fd] = flags;
  record(K_OPEN, fd, flags, 0, path, (uint32_t)n, NULL, 0);
}

static int is_traced(int fd) { return fd >= 0 && fd < MAX_FDS && traced[fd]; }

/// Where a write without an offset lands: the end for O_APPEND, else the current position.
static off_t write_position(int fd) {
  if (fd_flags[fd] & O_APPEND) {
    struct stat status;
    return fstat(fd, &status) == 0 ? status.st_size : -1;
  }
  return lseek(fd, 0, SEEK_CUR);
}

static void note_unhandled(const char *what) { record(K_UNHANDLED, -1, 0, 0, what, (uint32_t)strlen(what), NULL, 0); }

// ---------------------------------------------------------------------------------------------
// Opening

#define OPEN_BODY(call, flags)                    \
  pthread_mutex_lock(&lock);                      \
  int fd = call;                                  \
  if (fd >= 0) note_open(fd, flags);              \
  pthread_mutex_unlock(&lock);                    \
  return fd

static mode_t mode_argument(int flags, va_list arguments) {
  return ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE) ? (mode_t)va_arg(arguments, int) : 0;
}

int open(const char *path, int flags, ...) {
  va_list arguments;
  va_start(arguments, flags);
  mode_t mode = mode_argument(flags, arguments);
  va_end(arguments);
  REAL(open);
  OPEN_BODY(real_open(path, flags, mode), flags);
}

int open64(const char *path, int flags, ...) {
  va_list arguments;
  va_start(arguments, flags);
  mode_t mode = mode_argument(flags, arguments);
  va_end(arguments);
  REAL(open64);
  OPEN_BODY(real_open64(path, flags, mode), flags);
}

int openat(int dirfd, const char *path, int flags, ...) {
  va_list arguments;
  va_start(arguments, flags);
  mode_t mode = mode_argument(flags, arguments);
  va_end(arguments);
  REAL(openat);
  OPEN_BODY(real_openat(dirfd, path, flags, mode), flags);
}

int openat64(int dirfd, const char *path, int flags, ...) {
  va_list arguments;
  va_start(arguments, flags);
  mode_t mode = mode_argument(flags, arguments);
  va_end(arguments);
  REAL(openat64);
  OPEN_BODY(real_openat64(dirfd, path, flags, mode), flags);
}

int __open_2(const char *path, int flags) {
  REAL(__open_2);
  OPEN_BODY(real___open_2(path, flags), flags);
}

int __open64_2(const char *path, int flags) {
  REAL(__open64_2);
  OPEN_BODY(real___open64_2(path, flags), flags);
}

int __openat_2(int dirfd, const char *path, int flags) {
  REAL(__openat_2);
  OPEN_BODY(real___openat_2(dirfd, path, flags), flags);
}

int __openat64_2(int dirfd, const char *path, int flags) {
  REAL(__openat64_2);
  OPEN_BODY(real___openat64_2(dirfd, path, flags), flags);
}

int creat(const char *path, mode_t mode) {
  REAL(creat);
  OPEN_BODY(real_creat(path, mode), O_WRONLY | O_CREAT | O_TRUNC);
}

int creat64(const char *path, mode_t mode) {
  REAL(creat64);
  OPEN_BODY(real_creat64(path, mode), O_WRONLY | O_CREAT | O_TRUNC);
}

int close(int fd) {
  REAL(close);
  pthread_mutex_lock(&lock);
  if (is_traced(fd)) {
    traced[fd] = 0;
    record(K_CLOSE, fd, 0, 0, NULL, 0, NULL, 0);
  }
  int result = real_close(fd);
  pthread_mutex_unlock(&lock);
  return result;
}

static void note_dup(int old, int result) {
  if (is_traced(old) && result >= 0) note_unhandled("dup of a recorded descriptor");
}

int dup(int fd) {
  REAL(dup);
  pthread_mutex_lock(&lock);
  int result = real_dup(fd);
  note_dup(fd, result);
  pthread_mutex_unlock(&lock);
  return result;
}

int dup2(int fd, int target) {
  REAL(dup2);
  pthread_mutex_lock(&lock);
  int result = real_dup2(fd, target);
  note_dup(fd, result);
  if (result >= 0 && is_traced(target) && fd != target) note_unhandled("dup2 over a recorded descriptor");
  pthread_mutex_unlock(&lock);
  return result;
}

int dup3(int fd, int target, int flags) {
  REAL(dup3);
  pthread_mutex_lock(&lock);
  int result = real_dup3(fd, target, flags);
  note_dup(fd, result);
  if (result >= 0 && is_traced(target)) note_unhandled("dup3 over a recorded descriptor");
  pthread_mutex_unlock(&lock);
  return result;
}

// ---------------------------------------------------------------------------------------------
// Writing

ssize_t write(int fd, const void *buffer, size_t count) {
  if (!raw_write) raw_write = (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
  if (!is_traced(fd)) return raw_write(fd, buffer, count);
  pthread_mutex_lock(&lock);
  off_t offset = write_position(fd);
  ssize_t n = raw_write(fd, buffer, count);
  if (n > 0) record(K_WRITE, fd, offset, 0, buffer, (uint32_t)n, NULL, 0);
  pthread_mutex_unlock(&lock);
  return n;
}

#define PWRITE_BODY(call)                                                      \
  if (!is_traced(fd)) return call;                                             \
  pthread_mutex_lock(&lock);                                                   \
  ssize_t n = call;                                                            \
  if (n > 0) record(K_WRITE, fd, offset, 0, buffer, (uint32_t)n, NULL, 0);     \
  pthread_mutex_unlock(&lock);                                                 \
  return n

ssize_t pwrite(int fd, const void *buffer, size_t count, off_t offset) {
  REAL(pwrite);
  PWRITE_BODY(real_pwrite(fd, buffer, count, offset));
}

ssize_t pwrite64(int fd, const void *buffer, size_t count, off64_t offset) {
  REAL(pwrite64);
  PWRITE_BODY(real_pwrite64(fd, buffer, count, offset));
}

/// Records a vectored write of `n` bytes at `offset` as one write of the gathered bytes.
static void record_vector(int fd, off_t offset, const struct iovec *vector, int count, ssize_t n) {
  if (n <= 0) return;
  char *gathered = malloc((size_t)n);
  if (!gathered) {
    note_unhandled("out of memory gathering a vectored write");
    return;
  }
  size_t filled = 0;
  for (int i = 0; i < count && filled < (size_t)n; i++) {
    size_t take = vector[i].iov_len;
    if (take > (size_t)n - filled) take = (size_t)n - filled;
    memcpy(gathered + filled, vector[i].iov_base, take);
    filled += take;
  }
  record(K_WRITE, fd, offset, 0, gathered, (uint32_t)n, NULL, 0);
  free(gathered);
}

ssize_t writev(int fd, const struct iovec *vector, int count) {
  REAL(writev);
  if (!is_traced(fd)) return real_writev(fd, vector, count);
  pthread_mutex_lock(&lock);
  off_t offset = write_position(fd);
  ssize_t n = real_writev(fd, vector, count);
  record_vector(fd, offset, vector, count, n);
  pthread_mutex_unlock(&lock);
  return n;
}

#define PWRITEV_BODY(call)                           \
  if (!is_traced(fd)) return call;                   \
  pthread_mutex_lock(&lock);                         \
  off_t at = offset == -1 ? write_position(fd) : offset; \
  ssize_t n = call;                                  \
  record_vector(fd, at, vector, count, n);           \
  pthread_mutex_unlock(&lock);                       \
  return n

ssize_t pwritev(int fd, const struct iovec *vector, int count, off_t offset) {
  REAL(pwritev);
  PWRITEV_BODY(real_pwritev(fd, vector, count, offset));
}

ssize_t pwritev64(int fd, const struct iovec *vector, int count, off64_t offset) {
  REAL(pwritev64);
  PWRITEV_BODY(real_pwritev64(fd, vector, count, offset));
}

ssize_t pwritev2(int fd, const struct iovec *vector, int count, off_t offset, int flags) {
  REAL(pwritev2);
  if (is_traced(fd) && (flags & (RWF_DSYNC | RWF_SYNC))) note_unhandled("pwritev2 with RWF_DSYNC or RWF_SYNC");
  PWRITEV_BODY(real_pwritev2(fd, vector, count, offset, flags));
}

ssize_t pwritev64v2(int fd, const struct iovec *vector, int count, off64_t offset, int flags) {
  REAL(pwritev64v2);
  if (is_traced(fd) && (flags & (RWF_DSYNC | RWF_SYNC))) note_unhandled("pwritev2 with RWF_DSYNC or RWF_SYNC");
  PWRITEV_BODY(real_pwritev64v2(fd, vector, count, offset, flags));
}

/// Records the size a call left a recorded file with, when it changed.
static void record_size_change(int fd, off_t before) {
  struct stat status;
  if (fstat(fd, &status) == 0 && status.st_size != before) record(K_TRUNCATE, fd, status.st_size, 0, NULL, 0, NULL, 0);
}

static off_t size_of(int fd) {
  struct stat status;
  return fstat(fd, &status) == 0 ? status.st_size : -1;
}

#define RESIZE_BODY(call)                   \
  if (!is_traced(fd)) return call;          \
  pthread_mutex_lock(&lock);                \
  off_t before = size_of(fd);               \
  int result = call;                        \
  if (result == 0) record_size_change(fd, before); \
  pthread_mutex_unlock(&lock);              \
  return result

int ftruncate(int fd, off_t length) {
  REAL(ftruncate);
  if (!is_traced(fd)) return real_ftruncate(fd, length);
  pthread_mutex_lock(&lock);
  int result = real_ftruncate(fd, length);
  if (result == 0) record(K_TRUNCATE, fd, length, 0, NULL, 0, NULL, 0);
  pthread_mutex_unlock(&lock);
  return result;
}

int ftruncate64(int fd, off64_t length) {
  REAL(ftruncate64);
  if (!is_traced(fd)) return real_ftruncate64(fd, length);
  pthread_mutex_lock(&lock);
  int result = real_ftruncate64(fd, length);
  if (result == 0) record(K_TRUNCATE, fd, length, 0, NULL, 0, NULL, 0);
  pthread_mutex_unlock(&lock);
  return result;
}

int fallocate(int fd, int mode, off_t offset, off_t length) {
  REAL(fallocate);
  if (is_traced(fd) && mode != 0) note_unhandled("fallocate with a mode");
  RESIZE_BODY(real_fallocate(fd, mode, offset, length));
}

int fallocate64(int fd, int mode, off64_t offset, off64_t length) {
  REAL(fallocate64);
  if (is_traced(fd) && mode != 0) note_unhandled("fallocate with a mode");
  RESIZE_BODY(real_fallocate64(fd, mode, offset, length));
}

int posix_fallocate(int fd, off_t offset, off_t length) {
  REAL(posix_fallocate);
  RESIZE_BODY(real_posix_fallocate(fd, offset, length));
}

int posix_fallocate64(int fd, off64_t offset, off64_t length) {
  REAL(posix_fallocate64);
  RESIZE_BODY(real_posix_fallocate64(fd, offset, length));
}

int truncate(const char *path, off_t length) {
  REAL(truncate);
  pthread_mutex_lock(&lock);
  int result = real_truncate(path, length);
  char resolved[PATH_MAX];
  if (result == 0 && realpath(path, resolved) && under_root(resolved)) {
    note_unhandled("truncate by path");
  }
  pthread_mutex_unlock(&lock);
  return result;
}

void *mmap(void *address, size_t length, int protection, int flags, int fd, off_t offset) {
  REAL(mmap);
  if (is_traced(fd) && (protection & PROT_WRITE) && (flags & MAP_SHARED)) {
    pthread_mutex_lock(&lock);
    char link[64], path[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (n > 0) {
      char text[PATH_MAX + 64];
      int length_text = snprintf(text, sizeof text, "shared writable mapping of %.*s", (int)n, path);
      record(K_UNHANDLED, fd, 0, 0, text, (uint32_t)length_text, NULL, 0);
    }
    pthread_mutex_unlock(&lock);
  }
  return real_mmap(address, length, protection, flags, fd, offset);
}

void *mmap64(void *address, size_t length, int protection, int flags, int fd, off64_t offset) {
  return mmap(address, length, protection, flags, fd, (off_t)offset);
}

// ---------------------------------------------------------------------------------------------
// Syncing

#define SYNC_BODY(call, how)                                      \
  if (!is_traced(fd)) return call;                                \
  pthread_mutex_lock(&lock);                                      \
  int result = call;                                              \
  if (result == 0) record(K_SYNC, fd, how, 0, NULL, 0, NULL, 0);  \
  pthread_mutex_unlock(&lock);                                    \
  return result

int fsync(int fd) {
  REAL(fsync);
  SYNC_BODY(real_fsync(fd), 0);
}

int fdatasync(int fd) {
  REAL(fdatasync);
  SYNC_BODY(real_fdatasync(fd), 1);
}

int sync_file_range(int fd, off64_t offset, off64_t count, unsigned int flags) {
  REAL(sync_file_range);
  SYNC_BODY(real_sync_file_range(fd, offset, count, flags), 2);
}

int msync(void *address, size_t length, int flags) {
  REAL(msync);
  pthread_mutex_lock(&lock);
  int result = real_msync(address, length, flags);
  // Which file a mapping belongs to is not known here; a msync is only noted.
  if (result == 0) record(K_SYNC, -1, 3, 0, NULL, 0, NULL, 0);
  pthread_mutex_unlock(&lock);
  return result;
}

void sync(void) {
  REAL(sync);
  pthread_mutex_lock(&lock);
  real_sync();
  record(K_SYNC_ALL, -1, 0, 0, NULL, 0, NULL, 0);
  pthread_mutex_unlock(&lock);
}

int syncfs(int fd) {
  REAL(syncfs);
  pthread_mutex_lock(&lock);
  int result = real_syncfs(fd);
  if (result == 0) record(K_SYNC_ALL, -1, 0, 0, NULL, 0, NULL, 0);
  pthread_mutex_unlock(&lock);
  return result;
}

// ---------------------------------------------------------------------------------------------
// Names

static void note_path(uint32_t kind, int dirfd, const char *path, int result) {
  char resolved[PATH_MAX];
  if (result == 0 && resolve(dirfd, path, resolved) == 0 && under_root(resolved)) {
    record(kind, -1, 0, 0, resolved, (uint32_t)strlen(resolved), NULL, 0);
  }
}

/// Resolves a path before a call that removes or moves it (its parent must still exist).
static int resolve_before(int dirfd, const char *path, char *out) {
  return resolve(dirfd, path, out) == 0 && under_root(out);
}

#define RENAME_BODY(call, olddir, old, newdir, new, flags)                                      \
  pthread_mutex_lock(&lock);                                                                   \
  char from[PATH_MAX], to[PATH_MAX];                                                           \
  int from_in = resolve_before(olddir, old, from), to_in = resolve_before(newdir, new, to);    \
  int result = call;                                                                           \
  if (result == 0 && (from_in || to_in)) {                                                     \
    if (!(from_in && to_in)) note_unhandled("rename across the recorded directory's boundary"); \
    else if ((flags) & RENAME_EXCHANGE) note_unhandled("rename with RENAME_EXCHANGE");          \
    else record(K_RENAME, -1, (int64_t)(flags), 0, from, (uint32_t)strlen(from), to, (uint32_t)strlen(to)); \
  }                                                                                            \
  pthread_mutex_unlock(&lock);                                                                 \
  return result

int rename(const char *old, const char *new) {
  REAL(rename);
  RENAME_BODY(real_rename(old, new), AT_FDCWD, old, AT_FDCWD, new, 0u);
}

int renameat(int olddir, const char *old, int newdir, const char *new) {
  REAL(renameat);
  RENAME_BODY(real_renameat(olddir, old, newdir, new), olddir, old, newdir, new, 0u);
}

int renameat2(int olddir, const char *old, int newdir, const char *new, unsigned int flags) {
  REAL(renameat2);
  RENAME_BODY(real_renameat2(olddir, old, newdir, new, flags), olddir, old, newdir, new, flags);
}

#define REMOVE_BODY(call, dirfd, path, kind)                 \
  pthread_mutex_lock(&lock);                                 \
  char resolved[PATH_MAX];                                   \
  int inside = resolve_before(dirfd, path, resolved);        \
  int result = call;                                         \
  if (result == 0 && inside) record(kind, -1, 0, 0, resolved, (uint32_t)strlen(resolved), NULL, 0); \
  pthread_mutex_unlock(&lock);                               \
  return result

int unlink(const char *path) {
  REAL(unlink);
  REMOVE_BODY(real_unlink(path), AT_FDCWD, path, K_UNLINK);
}

int rmdir(const char *path) {
  REAL(rmdir);
  REMOVE_BODY(real_rmdir(path), AT_FDCWD, path, K_RMDIR);
}

int unlinkat(int dirfd, const char *path, int flags) {
  REAL(unlinkat);
  REMOVE_BODY(real_unlinkat(dirfd, path, flags), dirfd, path, (flags & AT_REMOVEDIR) ? K_RMDIR : K_UNLINK);
}

int remove(const char *path) {
  REAL(remove);
  pthread_mutex_lock(&lock);
  char resolved[PATH_MAX];
  int inside = resolve_before(AT_FDCWD, path, resolved);
  struct stat status;
  int directory = inside && lstat(path, &status) == 0 && S_ISDIR(status.st_mode);
  int result = real_remove(path);
  if (result == 0 && inside)
    record(directory ? K_RMDIR : K_UNLINK, -1, 0, 0, resolved, (uint32_t)strlen(resolved), NULL, 0);
  pthread_mutex_unlock(&lock);
  return result;
}

int mkdir(const char *path, mode_t mode) {
  REAL(mkdir);
  pthread_mutex_lock(&lock);
  int result = real_mkdir(path, mode);
  note_path(K_MKDIR, AT_FDCWD, path, result);
  pthread_mutex_unlock(&lock);
  return result;
}

int mkdirat(int dirfd, const char *path, mode_t mode) {
  REAL(mkdirat);
  pthread_mutex_lock(&lock);
  int result = real_mkdirat(dirfd, path, mode);
  note_path(K_MKDIR, dirfd, path, result);
  pthread_mutex_unlock(&lock);
  return result;
}

#define LINK_BODY(call, what, dirfd, path)                          \
  pthread_mutex_lock(&lock);                                        \
  int result = call;                                                \
  char resolved[PATH_MAX];                                          \
  if (result == 0 && resolve_before(dirfd, path, resolved)) note_unhandled(what); \
  pthread_mutex_unlock(&lock);                                      \
  return result

int link(const char *old, const char *new) {
  REAL(link);
  LINK_BODY(real_link(old, new), "hard link", AT_FDCWD, new);
}

int linkat(int olddir, const char *old, int newdir, const char *new, int flags) {
  REAL(linkat);
  LINK_BODY(real_linkat(olddir, old, newdir, new, flags), "hard link", newdir, new);
}

int symlink(const char *target, const char *path) {
  REAL(symlink);
  LINK_BODY(real_symlink(target, path), "symbolic link", AT_FDCWD, path);
}

int symlinkat(const char *target, int dirfd, const char *path) {
  REAL(symlinkat);
  LINK_BODY(real_symlinkat(target, dirfd, path), "symbolic link", dirfd, path);
}

// ---------------------------------------------------------------------------------------------
// The writer's own marks

/// Records a mark (the writer's "commit N acknowledged") at this point of the trace. The writer
/// finds it with dlsym; a writer run without the shim finds nothing and refuses to go on.
void crash_shim_mark(const char *text) {
  pthread_mutex_lock(&lock);
  record(K_MARK, -1, 0, 0, text, (uint32_t)strlen(text), NULL, 0);
  pthread_mutex_unlock(&lock);
}
