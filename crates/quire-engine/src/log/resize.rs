//! # Online resize (lesson 2: "a dynamic add/remove of REDO log files … a great feature")
//!
//! Protocol (crash analysis in `docs/redo-log.md`):
//! 1. When shrinking, lower the appenders' space limit to the new size first, so no new
//!    reservation outgrows the new file.
//! 2. Build `redo.log.new`: header, checkpoint slot, sized, synced.
//! 3. Copy the log after the checkpoint from the old file while appends and writes go on,
//!    until the remainder is small.
//! 4. Switch, holding the writer and checkpoint mutexes: copy the rest, write the current
//!    checkpoint into the new file, sync it, rename it over `redo.log`, sync the directory,
//!    and only then let the writer continue, into the new file.
//!
//! Invariant: at every instant, the file named `redo.log` on disk holds every acknowledged
//! frame after its newest valid checkpoint. Before the rename that is the old file (it gets
//! every write until the switch); the new file is complete and synced before the rename.

use std::sync::atomic::Ordering::SeqCst;
use std::sync::Arc;

use super::file::LogFile;
use super::format::{self, CheckpointSlot, BLOCK, MIN_CAPACITY};
use super::open::write_new_file;
use super::writer::{Log, Shared, SLACK};
use super::{LogError, Result, LOG_FILE, LOG_FILE_NEW};
use crate::page::Lsn;

/// Each copy step moves at most this much.
const COPY_CHUNK: u64 = 1 << 20;

impl Log {
    /// Changes the capacity (`innodb_log_file_size`) without a restart; appends continue
    /// meanwhile. Shrinking below the current checkpoint age is
    /// [`LogError::ResizeTooSmall`]: make a checkpoint first.
    pub fn resize(&self, new_file_size: u64) -> Result<()> {
        self.shared().resize(new_file_size)
    }
}

impl Shared {
    pub(crate) fn resize(&self, new_file_size: u64) -> Result<()> {
        let _one_at_a_time = self.resize_lock.lock();
        let new_cap = new_file_size - new_file_size % BLOCK;
        if new_cap < MIN_CAPACITY {
            return Err(LogError::BadConfig(format!(
                "innodb_log_file_size = {new_file_size} is below the minimum {MIN_CAPACITY}"
            )));
        }
        let old_cap = self.file.read().capacity;
        if new_cap == old_cap {
            return Ok(());
        }
        let ring = self.buf.size();
        let old_limit = self.space_limit.load(SeqCst);
        let old_max = self.max_payload.load(SeqCst);
        // Step 1. A claim made after these stores sees them; one made before is covered by
        // the check of `claimed` at the switch. The frame size first: in between, grants
        // keep a smaller overdraft under the larger limit, which still fits.
        self.max_payload
            .store(old_max.min(format::max_payload(ring, new_cap)), SeqCst);
        self.space_limit
            .store(old_limit.min(new_cap - SLACK), SeqCst);

        let new_path = self.dir.join(LOG_FILE_NEW);
        let r = self.resize_steps(new_cap);
        if r.is_err() {
            // The limit first, for the same reason as in step 1.
            self.space_limit.store(old_limit, SeqCst);
            self.max_payload.store(old_max, SeqCst);
            if self.vfs.exists(&new_path).unwrap_or(false) {
                // Harmless if it fails: open deletes a leftover `.new`.
                let _ = self.vfs.delete(&new_path);
            }
            self.wake();
        }
        r
    }

    fn resize_steps(&self, new_cap: u64) -> Result<()> {
        let new_path = self.dir.join(LOG_FILE_NEW);
        let path = self.dir.join(LOG_FILE);
        if self.vfs.exists(&new_path)? {
            self.vfs.delete(&new_path)?;
        }
        // Step 2.
        let ckpt0 = Lsn(self.checkpoint.load(SeqCst));
        let new = write_new_file(
            &*self.vfs,
            &new_path,
            &self.config,
            new_cap,
            ckpt0,
            self.epoch,
            1,
        )?;
        let old = Arc::clone(&self.file.read());
        if new.io_block != old.io_block {
            return Err(LogError::BadConfig(format!(
                "{}: the new file's O_DIRECT block {} differs from the old one's {}",
                new_path.display(),
                new.io_block,
                old.io_block
            )));
        }

        // Step 3: copy while everyone keeps going.
        let mut from = ckpt0.0;
        loop {
            let upto = self.written.load(SeqCst);
            copy_log(&old, &new, from, upto)?;
            from = upto;
            if self.written.load(SeqCst) - from < COPY_CHUNK {
                break;
            }
        }

        // Step 4: the switch. Appends keep copying into the ring meanwhile.
        let w = self.writer.lock();
        let mut c = self.ckpt.lock();
        let ckpt = self.checkpoint.load(SeqCst);
        // Claimed, not reserved: reservations granted under the old limit may still append
        // (writer invariant 8).
        let claimed = self.buf.claimed();
        if claimed - ckpt > new_cap - SLACK {
            return Err(LogError::ResizeTooSmall {
                new_capacity: new_cap,
                checkpoint_age: claimed - ckpt,
            });
        }
        let written = self.written.load(SeqCst);
        copy_log(&old, &new, from, written)?;
        let slot = CheckpointSlot {
            checkpoint_lsn: Lsn(ckpt),
            capacity: new_cap,
            seq: c.seq + 1,
            epoch: self.epoch,
            durable_lsn: Lsn(written),
        };
        // Syncs the new file: header, copied log and slot are durable before the rename.
        self.write_slot(&new, 0, &slot);
        if self.config.dsync {
            new.handle.sync_data();
        }
        self.vfs.rename(&new_path, &path)?;
        // From here the directory may name either file; the writer stays stopped until the
        // rename is durable, so no acknowledged write can go to a file a crash would lose.
        if let Err(e) = self.vfs.sync_dir(&self.dir) {
            quire_io::fatal::fatal_io(&e);
        }
        if self.buffered.load(SeqCst) {
            // The old file was switched to buffered writes: so is its successor (a file that
            // cannot switch simply stays O_DIRECT, and `buffered` says so).
            let ok = new.handle.inner().set_buffered(true).unwrap_or(false);
            self.buffered.store(ok, SeqCst);
        }
        // Prewrite invariant 4: `busy` last. No chunk is in flight on the old file from here,
        // and the new file's first lap starts at its `created_lsn`.
        let busy = self.prewrite.busy.lock();
        *self.file.write() = Arc::new(new);
        self.prewrite.new_file(ckpt0.0, new_cap);
        drop(busy);
        c.seq += 1;
        c.next_slot = 1;
        // Everything written is now durable in the new file; acknowledged only up to
        // `stable`, since the partial last block will be rewritten (invariant 6 in `writer`).
        self.flushed.fetch_max(self.stable.load(SeqCst), SeqCst);
        self.space_limit.store(new_cap - SLACK, SeqCst);
        self.max_payload
            .store(format::max_payload(self.buf.size(), new_cap), SeqCst);
        drop(c);
        drop(w);
        self.wake();
        self.check_invariants();
        tracing::info!(target: "quire::log", "resized {} to {new_cap} bytes", path.display());
        Ok(())
    }
}

/// Copies the log at LSNs `[from, to)` from `old` to `new` (different capacities), in
/// 4 KiB-aligned chunks that cross neither file's end of circle. Bytes after `to` in the
/// last block are zeroed (the end of the log).
fn copy_log(old: &LogFile, new: &LogFile, from: u64, to: u64) -> Result<()> {
    let old_len = old.handle.len()?;
    let mut pos = from - from % BLOCK;
    let end_all = to.div_ceil(BLOCK) * BLOCK;
    let mut buf = new.buf(COPY_CHUNK as usize);
    while pos < end_all {
        let wrap_old = (pos / old.capacity + 1) * old.capacity;
        let wrap_new = (pos / new.capacity + 1) * new.capacity;
        let end = end_all.min(pos + COPY_CHUNK).min(wrap_old).min(wrap_new);
        let n = (end - pos) as usize;
        old.read_data(pos, &mut buf[..n], old_len)?;
        if end > to {
            buf[(to - pos) as usize..n].fill(0);
        }
        new.write_data(pos, &buf[..n]);
        pos = end;
    }
    Ok(())
}
