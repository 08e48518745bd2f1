/*
 * safe-extract.h - libsafe-extract: unpack untrusted archives with every
 * file-system operation scoped by the kernel to one destination directory.
 *
 * The model, in four objects:
 *
 *   se_root   a destination opened once.  Every archive path is resolved
 *             relative to it, never relative to the current directory or
 *             '/', with openat2(2) RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
 *             RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS (or the AT_* flags of
 *             this project's kernel series, or a userspace walk where the
 *             kernel has neither).
 *   se_run    one extraction: one or more archives into one root, with one
 *             policy (SE_OPT_* bits and the setters below).  The caller owns
 *             the libarchive reader and may drive it entry by entry
 *             (se_run_entry) or hand the whole archive over (se_run_archive).
 *   se_entry  what a callback sees before (SE_BEFORE) and after (SE_AFTER)
 *             each entry.  Before: the caller may rename, change the owner,
 *             mode or xattrs, skip or abort.  Names are cleaned and checked
 *             after that, so a callback can never weaken the checks.
 *   status    functions return 0 or a negative errno; se_run_finish returns
 *             the run's verdict (0, 1, 2, as the command's exit status).
 *
 * The library keeps no global state, installs no signal handler, never
 * changes the umask, the locale or stdio, never exits and never prints:
 * messages go to the log callback, per-entry outcomes to the entry
 * callback and, when asked, as JSON Lines to a report fd.  Every fd it
 * opens is O_CLOEXEC.  One se_run is used by one thread at a time;
 * distinct runs may run in parallel.
 *
 * A small example (error handling trimmed):
 *
 *	se_root *root;
 *	se_run *run;
 *	struct archive *a;
 *
 *	se_root_open("/srv/unpacked", 0, &root);
 *	run = se_run_new(root, SE_OPT_DURABLE);
 *	se_run_open_fd(run, fd, NULL, &a);
 *	se_run_archive(run, a);
 *	archive_read_free(a);
 *	status = se_run_finish(run);	// 0 all extracted, 1 some refused
 *	se_run_free(run);
 *	se_root_close(root);
 *
 * See libsafe-extract(3) for every function.
 */
#ifndef SAFE_EXTRACT_H
#define SAFE_EXTRACT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct archive;
struct archive_entry;

#define SE_VERSION_MAJOR 0
#define SE_VERSION_MINOR 3

/* The library's version as "MAJOR.MINOR.PATCH". */
const char *se_version(void);

/* ---- the destination --------------------------------------------------- */

typedef struct se_root se_root;

/* Flags of se_root_open(); each one but SE_REQUIRE_KERNEL weakens the
 * strict default, and says what it gives up. */
#define SE_IN_ROOT		(1u << 0)	/* follow symlinks, resolved as if the root were '/' */
#define SE_CROSS_MOUNTS		(1u << 1)	/* cross mount points below the root */
#define SE_REQUIRE_KERNEL	(1u << 2)	/* no userspace walk: fail without openat2 */
/* Between strict and SE_IN_ROOT (tar's --keep-directory-symlink): a path
 * may go through a symlink to a directory that was in the root before it
 * was opened, if its relative target stays inside the root; never through
 * one a run made, never through an absolute target.  A weakening. */
#define SE_KEEP_DIR_SYMLINKS	(1u << 3)
/* Force one backend (testing, or to compare them); at most one. */
#define SE_BACKEND_AT		(1u << 8)	/* this project's AT_* kernel flags */
#define SE_BACKEND_OPENAT2	(1u << 9)
#define SE_BACKEND_WALK		(1u << 10)	/* userspace walk: not race-safe */

/*
 * Open the directory PATH as a destination.  PATH is the caller's, not an
 * archive's: it is opened as given (symlinks in it are followed).
 * Returns 0 and sets *ROOT, or a negative errno: -ENOSYS when
 * SE_REQUIRE_KERNEL (or a forced kernel backend) is asked and the kernel
 * cannot scope lookups, -EINVAL for an unknown flag.
 */
int se_root_open(const char *path, unsigned int flags, se_root **root);

/* The same from a directory fd, which is duplicated (the caller keeps
 * DIRFD). */
int se_root_open_fd(int dirfd, unsigned int flags, se_root **root);

/* "at", "openat2" or "walk". */
const char *se_root_backend(const se_root *root);

/* Is the backend a userspace walk (no defence against a concurrent rename
 * inside the root)?  A caller should say so to its user. */
int se_root_is_userspace(const se_root *root);

/*
 * lstat(2) of PATH (an archive-style name: cleaned and checked as entry
 * names are, '..' refused) inside ROOT, resolved with the root's scoping;
 * the last component is not followed.  For decisions a caller makes before
 * an entry (does etc/x exist: write etc/x.pacnew).  0 or a negative errno.
 */
struct stat;
int se_root_lstat(se_root *root, const char *path, struct stat *st);

/*
 * What a package manager does to its files after extraction (checksum a
 * config file, rename it to .pacnew, remove an old one), under the root's
 * scoping.  PATH is checked as an entry name; the last component is never
 * followed (a symlink there: ELOOP with O_CREAT, or opened as itself with
 * O_PATH).  se_root_openat returns an fd (O_CLOEXEC) or a negative errno;
 * the others 0 or a negative errno.  FLAGS: AT_REMOVEDIR for unlinkat;
 * RENAME_NOREPLACE or RENAME_EXCHANGE for renameat.  Opening an existing
 * file for writing writes into that inode, which may have other names (a
 * planted hardlink to a file outside the root): to replace a file, create
 * a new one with O_CREAT|O_EXCL and se_root_renameat() it over the name.
 */
int se_root_openat(se_root *root, const char *path, int oflags, mode_t mode);
int se_root_unlinkat(se_root *root, const char *path, int flags);
int se_root_renameat(se_root *root, const char *from, const char *to,
		     unsigned int flags);

/*
 * Remove PATH and, when it is a directory, everything under it (what
 * GNU tar's incremental restore deletes), under the root's scoping.  PATH
 * is checked as an entry name; the root itself is never removed (""
 * or "." is -EINVAL).  Below PATH's parent every directory is opened from
 * its parent's fd with O_NOFOLLOW | O_DIRECTORY: a symlink is removed as
 * itself, never followed, and a mount point is never entered or removed
 * (-EXDEV; the rest is still removed).  FLAGS must be 0.  Returns 0 (also
 * when PATH does not exist) or the first negative errno.  Since 0.3.
 */
int se_root_remove_tree(se_root *root, const char *path, unsigned int flags);

/*
 * Finish or undo a --durable run on ROOT that was cut short (a kill, a
 * power cut, a fatal error), from the journal it left in the root
 * (.safe-extract-journal).  With the journal's commit on disk the run is
 * rolled forward (its renames finished), without it rolled back (its
 * temporaries and the objects it made removed, what it moved aside put
 * back): the root holds the whole old tree or the whole new one, and no
 * .safe-extract-* name.  Every run on a root does this first by itself.
 * The journal is untrusted: one that is not this user's regular file or
 * is malformed is refused and nothing changes; its names are resolved
 * beneath the root without following a symlink.  Returns SE_RECOVER_NONE
 * (no journal), SE_RECOVER_BACK or SE_RECOVER_FORWARD, or a negative
 * errno with MSG (MSGLEN bytes; may be NULL) saying why.  Since 0.3.
 */
#define SE_RECOVER_NONE		0
#define SE_RECOVER_BACK		1
#define SE_RECOVER_FORWARD	2
int se_root_recover(se_root *root, char *msg, size_t msglen);

/* NULL is allowed.  A root must outlive every run made on it. */
void se_root_close(se_root *root);

/* ---- a run ------------------------------------------------------------ */

typedef struct se_run se_run;

/* se_run_new() OPTS.  Owner and mode policy follow GNU tar. */
#define SE_OPT_KEEP_OLD		(1ull << 0)	/* never replace an existing name (-k) */
#define SE_OPT_UNLINK		(1ull << 1)	/* remove a symlink in a directory's way (-U) */
#define SE_OPT_DURABLE		(1ull << 2)	/* all written, syncfs, all renamed, syncfs */
#define SE_OPT_SAME_OWNER	(1ull << 3)	/* restore owners (needs root) */
#define SE_OPT_SAME_PERMS	(1ull << 4)	/* modes without the umask; set-id with owner */
#define SE_OPT_NUMERIC_OWNER	(1ull << 5)	/* owners by number, never by name */
#define SE_OPT_XATTRS		(1ull << 6)	/* user.* xattrs, more with se_run_xattrs_include */
#define SE_OPT_ACLS		(1ull << 7)	/* POSIX ACLs */
#define SE_OPT_DEVICES		(1ull << 8)	/* create device nodes (root only); a weakening */
#define SE_OPT_DRY_RUN		(1ull << 9)	/* check names and report, write nothing */
#define SE_OPT_SHA256		(1ull << 10)	/* se_entry.sha256 of each file written */
#define SE_OPT_SKIP_OLD		(1ull << 11)	/* an existing name is kept, the entry skipped */
#define SE_OPT_TOUCH		(1ull << 12)	/* do not restore modification times (tar -m) */
#define SE_OPT_KEEP_DIR_METADATA (1ull << 13)	/* an existing directory keeps its owner, mode, times */
#define SE_OPT_KEEP_NEWER	(1ull << 14)	/* keep an existing non-directory at least as new */
#define SE_OPT_LITERAL_NAMES	(1ull << 15)	/* include patterns are names, not globs */
#define SE_OPT_IGNORE_ZEROS	(1ull << 16)	/* read tar past zero blocks (concatenated) */

/*
 * A run on ROOT.  Returns NULL only when out of memory.  The umask applied
 * to modes is 022 until se_run_set_umask() says otherwise; owners are
 * restored only with SE_OPT_SAME_OWNER and only when the process may.
 */
se_run *se_run_new(se_root *root, unsigned long long opts);

/* The umask to apply to modes without SE_OPT_SAME_PERMS (the library never
 * calls umask(2): pass the process's, read once by the caller). */
void se_run_set_umask(se_run *run, mode_t mask);

/*
 * Threads the run may use (1 to SE_JOBS_MAX, or SE_JOBS_AUTO; 1, the
 * default, is a plain sequential run in the caller's thread).  With N > 1, an xz stream is
 * decoded by N threads and gzip, xz and zstd in a thread beside the
 * writing; regular files' data, owner, mode and times are written by
 * N writer threads while the caller's thread reads on.  Every name is
 * still resolved, created and renamed in the caller's thread in archive
 * order, entries that could affect each other (the same name, one under
 * the other, hardlinks, devices) wait for each other, and outcomes reach
 * the callback and the report in archive order: the tree, the report and
 * the exit status are those of N = 1.  What changes: the BEFORE callback
 * of a later entry may come before the AFTER callback of an earlier one,
 * and after se_run_entry() returns, the entry may still be in flight
 * (se_run_archive() and se_run_finish() wait for all of them).
 *
 * SE_JOBS_AUTO (the command line's default): threads only where they
 * pay, chosen by the work: a gzip, xz or zstd stream is decoded in a
 * thread beside the writing (xz by as many threads as the process has
 * CPUs), and the caller's thread writes every file, as with 1.  Writer
 * threads cost more than they saved on every workload measured (issue
 * 25), so they run only when N > 1 asks for them.  Since 0.3.
 */
#define SE_JOBS_MAX 64
#define SE_JOBS_AUTO 0u
int se_run_set_jobs(se_run *run, unsigned int n);

/* Memory that xz decoder threads may share (default 80 MiB): a stream
 * whose blocks need more is decoded in one thread.  One that needs more
 * than 1 GiB even then is refused. */
int se_run_set_xz_memlimit(se_run *run, uint64_t bytes);

/* Drop N leading components of every name (tar --strip-components). */
int se_run_set_strip_components(se_run *run, int n);

/*
 * Member selection, as tar: an include pattern is anchored and selects a
 * directory's contents; an exclude glob matches any trailing run of
 * components.  Patterns are copied.  se_run_unmatched() lists include
 * patterns that matched no member so far (I from 0; NULL past the end).
 */
int se_run_add_include(se_run *run, const char *pattern);
int se_run_add_exclude(se_run *run, const char *glob);
const char *se_run_unmatched(const se_run *run, size_t i);

/* tar --occurrence=N: of each member name that the include patterns
 * select, only the Nth occurrence in the archive is extracted (0: all). */
int se_run_set_occurrence(se_run *run, unsigned int n);

/* Which xattr names are restored with SE_OPT_XATTRS (globs; without an
 * include only user.*).  security.capability also needs the set-id rule. */
int se_run_xattrs_include(se_run *run, const char *glob);
int se_run_xattrs_exclude(se_run *run, const char *glob);

/*
 * How owner names become ids when owners are restored (SE_OPT_SAME_OWNER
 * without SE_OPT_NUMERIC_OWNER).  By default: in an SE_IN_ROOT root, the
 * root's own etc/passwd and etc/group (read once, through the root's
 * scoping); otherwise the host's databases.  A lookup callback replaces
 * both: it sets *ID and returns 0, or returns nonzero for "unknown", and
 * the entry's numeric id is used.  GROUP is 0 for a user, 1 for a group.
 */
typedef int se_owner_cb(void *data, int group, const char *name, unsigned int *id);
int se_run_set_owner_lookup(se_run *run, se_owner_cb *cb, void *data);

/*
 * Owners for a container that runs in a user namespace (rootless use):
 * COUNT ids from CONTAINER_ID, as the archive gives them, become the
 * host ids from HOST_ID, as newuidmap(1) writes a range of uid_map.
 * WHICH is SE_MAP_UID, SE_MAP_GID or both; each call adds a range.
 *
 * Once any range is set, every owner the run sets is mapped: files,
 * directories (their deferred metadata too), symlinks, FIFOs, devices,
 * the root's own "./", with any se_run_set_jobs().  Users and groups
 * both: a kind with no range of its own holds no id.  The id mapped is
 * the one the run would set without maps, by name first (the rule of
 * se_run_set_owner_lookup(), which in an SE_IN_ROOT root reads the
 * root's own etc/passwd: the container's names), else the number.
 *
 * An id outside every range of its kind is never set as it is (the
 * container's root would be the host's): the entry's owner is not set at
 * all (it keeps the process's ids), its set-id bits and file
 * capabilities are dropped, and it is reported SE_INCOMPLETE, error
 * ERANGE, reason "uid N is outside every --map-ids range: owner not
 * restored" (or gid, or both; "owner and set-id bits" when it had some).
 *
 * Call before the first entry, on a run that sets owners
 * (SE_OPT_SAME_OWNER, euid 0 as in a user namespace).  Returns 0;
 * -EINVAL for an unknown WHICH, a COUNT of 0, a range that reaches id
 * 4294967295 (chown(2) reads it as "leave unchanged"), or one whose
 * container ids or host ids overlap a range of the same kind (nothing
 * is added); -EPERM when the run sets no owner (the map would change
 * nothing); -EBUSY after the first entry; -ENOMEM.  Since 0.3.
 */
#define SE_MAP_UID	(1u << 0)
#define SE_MAP_GID	(1u << 1)
int se_run_add_id_map(se_run *run, unsigned int which, uint32_t container_id,
		      uint32_t host_id, uint32_t count);

/*
 * Apply each archive as a container image layer on top of what the root
 * holds (the lower layers).  SE_WHITEOUTS_NONE (the default): names that
 * begin with ".wh." are extracted as any other.  SE_WHITEOUTS_OCI, as the
 * OCI image spec's layer.md says:
 *   - ".wh.NAME" (a regular file) removes NAME from the lower layers: a
 *     file, a symlink (itself, never its target) or a directory with
 *     everything under it;
 *   - ".wh..wh..opq" (a regular file) removes every name its directory
 *     had from the lower layers, whatever its place among the entries;
 *   - a whiteout applies to the lower layers only: names this layer made
 *     before it stay (so do this layer's names under a directory it
 *     removes);
 *   - a whiteout of "", "." or "..", a marker that is not a regular file
 *     and a name under a ".wh." directory are refused; other ".wh..wh."
 *     names (aufs' bookkeeping) are skipped;
 *   - a non-directory in a directory's way is removed (a symlink as
 *     itself, never followed), and a directory in a non-directory's way
 *     with everything under it; a directory over a directory merges.
 * Markers never appear in the root; the AFTER callback and the report
 * give them the type "whiteout" or "opaque-whiteout" and the action
 * SE_CREATED when applied.  Every marker's directory is resolved from the
 * root for that marker alone, with the root's scoping (a layer's
 * "var/run -> /run" wants SE_IN_ROOT); below it, removal is as
 * se_root_remove_tree()'s.  With SE_OPT_DURABLE, what a layer removes is
 * moved aside under a temporary name, recorded in the journal first, and
 * removed after the commit point, so that the run (every layer of it)
 * lands whole or not at all.  Call before the first entry.  Returns 0,
 * -EINVAL for an unknown FORMAT, -EOPNOTSUPP for an SE_WHITEOUTS_OVERLAY*
 * format with SE_OPT_DURABLE (its opaque xattr on a directory that stays
 * has no undo), -EBUSY after the first entry.  Since 0.3.
 */
#define SE_WHITEOUTS_NONE	0
#define SE_WHITEOUTS_OCI	1
/*
 * For a root that is (or becomes) an overlayfs upper directory: every
 * rule of SE_WHITEOUTS_OCI, and each marker also stays as overlayfs
 * records it, so that the root mounted over the lower layers shows the
 * layer applied: a whiteout leaves a character device 0/0 (mode 0) at
 * its name (unless this layer's own entry holds the name), an opaque
 * marker the xattr "trusted.overlay.opaque" = "y" on its directory
 * (SE_WHITEOUTS_OVERLAY; needs CAP_SYS_ADMIN) or "user.overlay.opaque"
 * (SE_WHITEOUTS_OVERLAY_USER, for a mount with userxattr).  An image's
 * own xattrs in that namespace (with SE_OPT_XATTRS and an include that
 * takes them) are stored escaped, NS"overlay."NAME, which overlayfs
 * (Linux 6.7 and later) shows as NS NAME in the merged view: a layer
 * can never set the mount's own opaque, redirect or metacopy marks.
 * Since 0.3.
 */
#define SE_WHITEOUTS_OVERLAY	2
#define SE_WHITEOUTS_OVERLAY_USER 3
int se_run_set_whiteouts(se_run *run, int format);

/*
 * Unpack the OCI image layout directory DIRFD (the caller's; an fd of
 * the directory holding oci-layout, index.json and blobs/) into the
 * run's root: the manifest index.json tags TAG (the annotation
 * org.opencontainers.image.ref.name; NULL or "": the only manifest, else
 * the one for PLATFORM), following nested image indexes, whose
 * manifests are chosen by PLATFORM ("os/arch[/variant]", as "linux/amd64";
 * NULL: this machine's).  DIRFD may instead be an image archive, a
 * regular file open for reading: an uncompressed tar holding
 * such a layout (skopeo's oci-archive; `docker save` since Docker 25),
 * or `docker save`'s manifest.json, configs named HEX.json and layers
 * ID/layer.tar (TAG: one of an image's RepoTags, or what follows its
 * last ':').  It is read in place by offset, never copied: a member
 * named twice is refused, and a link member is followed only to another
 * member.  A layer.tar, which has no digest of its own, is checked by
 * its diff_id.  Then its layers in order, each applied as
 * se_run_set_whiteouts(SE_WHITEOUTS_OCI) applies an archive (turned on
 * by this call, unless an SE_WHITEOUTS_OVERLAY* was set before it);
 * open the root with SE_IN_ROOT and the run with
 * SE_OPT_NUMERIC_OWNER | SE_OPT_SAME_PERMS, as an image wants.
 *
 * Only sha256 digests are read ("sha256:" and 64 lowercase hex digits;
 * any other is refused before it names a file).  Every file is opened
 * from DIRFD one component at a time, never through a symlink, and must
 * be a regular file.  Before anything is written, every blob's size and
 * digest is checked against its descriptor, and every layer's
 * decompressed stream against the config's rootfs.diff_ids (each layer
 * is read and decompressed twice: once to check, once to apply, from
 * the same fd).  Layer media types: OCI tar, tar+gzip, tar+zstd and
 * Docker's tar.gzip; any other (a non-distributable layer) is refused.
 * A layer is applied only as the tar stream its diff_id names: one
 * decompression, the one its media type says.
 *
 * Returns 0 when every layer was applied (some entries may have been
 * refused: se_run_finish() says 1), or a negative errno with the reason
 * logged and the run fatal: -ENOENT (no such tag, no manifest),
 * -ENOTUNIQ (several candidates; the message names them), -EILSEQ (a
 * digest, size or diff_id that does not match: nothing was written),
 * -EOPNOTSUPP (a layer media type, or an overlay format with
 * SE_OPT_DURABLE), -EBUSY (after
 * the run's first entry).  Since 0.3.
 */
int se_run_image(se_run *run, int dirfd, const char *tag, const char *platform);

/* ---- what the caller hears ------------------------------------------- */

enum se_stage { SE_BEFORE, SE_AFTER };
enum se_action { SE_CREATED, SE_REPLACED, SE_SKIPPED, SE_REFUSED, SE_FAILED,
		 SE_INCOMPLETE /* at its name, but some metadata is missing */,
		 /* Reported a second time, after the run: the entry is at its
		  * name, but its data came after the input's last passed check
		  * (a gzip member's trailer, a zstd frame's end, an xz
		  * stream's end) and the stream then failed one.  Never under
		  * SE_OPT_DURABLE, which renames nothing then. */
		 SE_UNVERIFIED };
/* What an entry callback returns. */
enum { SE_CONTINUE, SE_SKIP, SE_ABORT };

struct se_entry {
	size_t size;			/* sizeof as the library was built */
	enum se_stage stage;
	/* BEFORE: the entry as read; the caller may change name, owner,
	 * mode, xattrs.  AFTER (since 0.3): never NULL, on every path (writer
	 * threads, deferred directory metadata, --durable renames): an entry
	 * rebuilt from what the run decoded, with the name as read, the type,
	 * permissions, size, uid, gid, mtime and link target; valid during
	 * the call.  (0.2 gave NULL with se_run_set_jobs() > 1 and for
	 * outcomes settled at the end of the run.) */
	struct archive_entry *entry;
	const char *path;		/* AFTER: the cleaned name used (the raw name if refused before cleaning) */
	enum se_action action;		/* AFTER */
	int error;			/* AFTER: errno value or 0 */
	const char *reason;		/* AFTER: NULL or printable ASCII (archive bytes in it
					 * escaped as \xNN); valid during the call */
	const char *type;		/* AFTER: "file", "directory", "symlink", "hardlink", ... */
	const char *name;		/* AFTER: the entry's raw name (as the report shows it) */
	uint64_t bytes;			/* AFTER: data bytes written for it */
	/* AFTER, with SE_OPT_SHA256: the SHA-256 of the content written for
	 * a file (or a hardlink that carried data), holes as zeros; NULL for
	 * other entries.  Valid during the call. */
	const unsigned char *sha256;
};

typedef int se_entry_cb(void *data, struct se_entry *e);
int se_run_set_callback(se_run *run, se_entry_cb *cb, void *data);

/* Messages about the run itself (a warning, why it stopped).  LEVEL is
 * SE_LOG_WARNING or SE_LOG_ERROR; MSG is already safe for a terminal. */
enum { SE_LOG_ERROR = 3, SE_LOG_WARNING = 4 };
typedef void se_log_cb(void *data, int level, const char *msg);
int se_run_set_log(se_run *run, se_log_cb *cb, void *data);

/* One JSON object per entry (path, type, action, reason, errno) written to
 * FD, which stays the caller's.  A failed write makes se_run_finish()
 * return 2. */
int se_run_set_report_fd(se_run *run, int fd);

/* ---- feeding it ------------------------------------------------------- */

/*
 * A libarchive reader on FD (the caller's; not closed) that reads archive
 * formats only (tar, cpio, zip, 7zip, ar, iso9660, rar, rar5, xar, lha,
 * cab) plus those FORMATS lists (comma-separated: "mtree", "raw", "empty",
 * "warc", "all"), every compression libarchive knows, and that checks
 * every gzip member's CRC32 and length trailer (libarchive does not).  It
 * also wakes up when se_run_cancel() is called while it waits for input.
 * Returns 0, -ENODATA for empty input, -EINVAL for an unknown format name,
 * or another negative errno (the message is logged).  Free it with
 * archive_read_free() after the last entry.
 */
int se_run_open_fd(se_run *run, int fd, const char *formats, struct archive **a);

/*
 * A reader of one member of OUTER (a reader from se_run_open_fd() or the
 * caller's, positioned anywhere before the member): the member named
 * MEMBER, or with MEMBER NULL a Debian or opkg package's payload (the
 * first member named data.tar or data.tar.*).  The member's bytes stream
 * through; nothing is spooled, and its compression is detected (gzip
 * trailers checked).  Returns 0, -ENOENT when there is no such member.
 * Free the inner reader before the outer one.
 */
int se_run_open_member(se_run *run, struct archive *outer, const char *member,
		       struct archive **a);

/* Is NAME a format se_run_open_fd() accepts in FORMATS? */
int se_format_known(const char *name);

/*
 * Extract the entry that archive_read_next_header(A) just returned, with
 * its data.  Returns 0 when the run goes on (the entry may have been
 * refused: the callback and the report say so), or a negative errno when
 * the run cannot go on (destination unusable, SE_ABORT, cancelled); the
 * entry's error is also set on A with archive_set_error().
 */
int se_run_entry(se_run *run, struct archive *a, struct archive_entry *e);
/*
 * In the BEFORE callback of an entry of A (a reader from se_run_open_fd()
 * or se_run_open_member(), fed by se_run_archive()): the directory
 * record GNU tar keeps in the pax header's GNU.dumpdir record in a
 * POSIX-format incremental dump (--format=posix --listed-incremental;
 * the GNU format keeps it as the 'D' entry's data), as stored: each name
 * prefixed by a letter and ended by a NUL.  *BUF holds *LEN bytes and a
 * NUL after them; valid until the next header is read.  0; -ENOENT when
 * the entry has none (or its header could not be read again from the
 * stream: a compression libarchive decoded itself); -EINVAL when A is
 * not the run's current reader.  Since 0.3.
 */
int se_run_entry_dumpdir(se_run *run, struct archive *a, const char **buf, size_t *len);

/*
 * se_root_renameat() and se_root_remove_tree() in RUN's root, for a
 * caller that renames or removes what the run made while it goes (GNU
 * tar's incremental restore, from the BEFORE callback of a directory
 * record; with one job, so that earlier entries are at their names).  The
 * run defers each directory's mode and times to se_run_finish(): a
 * directory removed here, or replaced by an empty-directory rename
 * target, is forgotten, so the end of the run neither looks for it nor
 * calls it failed; one renamed keeps its metadata, applied at its new
 * name.  Only a directory the removal or rename itself took is forgotten,
 * as found by its own fd once it has no name left: one moved out of the
 * way by someone else meanwhile still fails at the end.  FLAGS as the
 * se_root_ calls (RENAME_EXCHANGE: -EOPNOTSUPP).  0 or a negative errno;
 * -EINVAL for a run without a root, -EOPNOTSUPP with SE_OPT_DURABLE (a
 * removal there must go through the journal) or SE_OPT_DRY_RUN.  Since
 * 0.3.
 *
 * SE_RENAME_MAKE_PARENTS (se_run_renameat only): when a directory above
 * TO is missing and FROM exists, the missing directories are made first
 * (mode 0777 less the run's umask, each inside its scoped parent, as an
 * entry's are) and the rename is made; GNU tar's incremental restore
 * does so for a directory renamed into one the dump makes later.
 */
#define SE_RENAME_MAKE_PARENTS (1u << 16)
int se_run_renameat(se_run *run, const char *from, const char *to, unsigned int flags);
int se_run_remove_tree(se_run *run, const char *path, unsigned int flags);

/*
 * Every entry of A to its end.  Returns 0, or a negative errno when the
 * archive is damaged or truncated or the run cannot go on (logged).
 */
int se_run_archive(se_run *run, struct archive *a);

/*
 * After the last archive: --durable's syncfs, renames and second syncfs,
 * then directory metadata.  Returns the verdict: 0 every entry extracted,
 * 1 some refused, failed or incomplete, 2 fatal (an earlier call failed,
 * the destination or the report failed, cancelled).
 */
int se_run_finish(se_run *run);

/* Stop the run as soon as possible; safe from a signal handler. */
void se_run_cancel(se_run *run);

/* Counters so far: entries seen, data bytes written, refused, failed. */
struct se_stats {
	size_t size;			/* sizeof as the caller was built */
	uint64_t entries, bytes;
	uint64_t refused, failed;
};
int se_run_stats(const se_run *run, struct se_stats *st);

/*
 * Write the data of every selected regular file to FD instead of creating
 * anything (tar -O): names are checked and selected as always, other
 * entries are reported skipped.  FD stays the caller's.
 */
int se_run_set_data_fd(se_run *run, int fd);

/* Free the run; removes every temporary it still owns.  NULL is allowed. */
void se_run_free(se_run *run);

/* ---- confining the process -------------------------------------------- */

/* What se_sandbox_apply() put in force. */
struct se_sandbox {
	size_t size;			/* set by the caller: sizeof(struct se_sandbox) */
	int landlock_abi;		/* the kernel's Landlock ABI; 0: none */
	int landlock_applied;		/* file-system rights dropped */
	int net_denied;			/* TCP bind/connect denied (Landlock ABI 4) */
	int seccomp_applied;		/* the system-call filter installed */
	unsigned long long fs_handled;	/* LANDLOCK_ACCESS_FS_* rights handled */
	unsigned long long fs_granted_in_root;	/* of those, allowed beneath the root */
	char why[256];			/* what is not in force and why, or "" */
};

#define SE_SANDBOX_NO_SECCOMP	(1u << 0)	/* Landlock only */
#define SE_SANDBOX_PROBE	(1u << 1)	/* change nothing: fill in landlock_abi */

/*
 * Confine the calling process, for good: PR_SET_NO_NEW_PRIVS; a Landlock
 * ruleset that handles every file-system right the kernel's ABI knows and
 * grants the ones that change things (write, create, remove, make-*, refer,
 * truncate) only beneath ROOT (NULL: nowhere), reading everywhere,
 * executing nowhere, and no TCP where the ABI has network rights; then a
 * seccomp filter that makes execve, sockets, ptrace, mounts, module and
 * key calls fail with EPERM.  Call it after everything outside the root is
 * open (the archive, a report file).  Never implicit: the library does not
 * call it itself.  Returns 0 when Landlock is in force (INFO says whether
 * seccomp is too), -ENOSYS when the kernel has no Landlock ABI 2 or later
 * (ABI 1 cannot allow links across directories; seccomp is still
 * applied), another negative errno on failure.
 */
int se_sandbox_apply(se_root *root, unsigned int flags, struct se_sandbox *info);

/* ---- helpers for callers ------------------------------------------------ */

/*
 * Escape NAME (archive bytes) for a terminal into BUF: printable ASCII
 * stays, \ and ' are backslashed, every other byte becomes \xNN; a
 * truncation ends in "...".  Returns BUF.
 */
char *se_escape(const char *name, char *buf, size_t bufsz);

/* "created", "replaced", ... */
const char *se_action_name(enum se_action a);

/* "ENOENT", "ELOOP", ...: the symbolic name of an errno value. */
const char *se_errno_name(int err);

#ifdef __cplusplus
}
#endif

#endif
