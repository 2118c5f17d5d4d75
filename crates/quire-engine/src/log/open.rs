//! # Creating and opening `redo.log`
//!
//! * [`Log::create`]: header, slot 0, sized file, synced file and directory.
//! * [`Log::open_for_recovery`]: checks the header, picks the newest valid checkpoint slot
//!   (a torn slot falls back to the other), and returns a [`Recovery`]: the scan from the
//!   checkpoint, so recovery reads the log once. [`Recovery::into_log`] then makes the next
//!   epoch durable and resumes appending where the scan ended.
//! * [`Log::open`]: both steps, discarding the frames.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use quire_io::{ErrorKind, OpenOptions, Vfs};

use super::file::LogFile;
use super::format::{
    CheckpointSlot, FileHeader, BLOCK, DATA_START, HEADER_OFFSET, SLOT_OFFSETS, START_LSN,
};
use super::reader::{Frame, LogReader};
use super::writer::{CkptState, Log, Shared, Start};
use super::{LogConfig, LogError, Result, LOG_FILE, LOG_FILE_NEW};
use crate::page::Lsn;

fn open_opts(config: &LogConfig, base: OpenOptions) -> OpenOptions {
    base.direct(config.direct).dsync(config.dsync)
}

fn corrupt(path: &Path, what: impl Into<String>) -> LogError {
    LogError::Corrupt {
        path: path.to_path_buf(),
        what: what.into(),
    }
}

/// Writes a complete, synced new log file at `path`: header, slot 0 at `checkpoint`, an
/// empty slot 1, sized to `capacity`. Used by create and by resize (which then copies log
/// into it). Does not sync the directory.
pub(crate) fn write_new_file(
    vfs: &dyn Vfs,
    path: &Path,
    config: &LogConfig,
    capacity: u64,
    checkpoint: Lsn,
    epoch: u32,
    seq: u64,
) -> Result<LogFile> {
    let inner = match vfs.open(path, open_opts(config, OpenOptions::create_new())) {
        Ok(f) => f,
        Err(e) if e.kind == ErrorKind::AlreadyExists => {
            return Err(LogError::AlreadyExists {
                path: path.to_path_buf(),
            })
        }
        Err(e) => return Err(e.into()),
    };
    let file = LogFile::new(inner, capacity)?;
    if config.preallocate {
        file.handle.allocate(0, DATA_START + capacity)?;
    } else {
        file.handle.set_len(DATA_START + capacity)?;
    }
    let mut b = file.buf(BLOCK as usize);
    FileHeader::new(capacity, checkpoint).encode(&mut b);
    file.write_block(HEADER_OFFSET, &b);
    CheckpointSlot {
        checkpoint_lsn: checkpoint,
        capacity,
        seq,
        epoch,
        durable_lsn: checkpoint,
    }
    .encode(&mut b);
    file.write_block(SLOT_OFFSETS[0], &b);
    b.fill(0);
    file.write_block(SLOT_OFFSETS[1], &b);
    file.handle.sync_data();
    Ok(file)
}

impl Log {
    /// Creates `dir/redo.log` and opens it for appending at [`START_LSN`].
    pub fn create(vfs: Arc<dyn Vfs>, dir: &Path, config: LogConfig) -> Result<Log> {
        config.validate()?;
        let path = dir.join(LOG_FILE);
        if vfs.exists(&path)? {
            return Err(LogError::AlreadyExists { path });
        }
        let capacity = config.capacity();
        let file = write_new_file(&*vfs, &path, &config, capacity, START_LSN, 1, 1)?;
        // The new directory entry is durable only once the directory is synced.
        vfs.sync_dir(dir)?;
        tracing::info!(target: "quire::log", "created {} with {capacity} bytes of log", path.display());
        let start = Start {
            file,
            end: START_LSN,
            checkpoint: START_LSN,
            ckpt: CkptState {
                seq: 1,
                next_slot: 1,
            },
            epoch: 1,
            tail: Vec::new(),
            stable: START_LSN,
            created: START_LSN,
        };
        Log::start(Shared::new(vfs, dir.to_path_buf(), config, start))
    }

    /// Opens `dir/redo.log` and resumes appending at the end of the log (the frames after
    /// the checkpoint are read and discarded; recovery uses [`Log::open_for_recovery`]).
    pub fn open(vfs: Arc<dyn Vfs>, dir: &Path, config: LogConfig) -> Result<Log> {
        Log::open_for_recovery(vfs, dir, config)?.into_log()
    }

    /// Opens `dir/redo.log` for recovery: an iterator over the frames after the checkpoint.
    pub fn open_for_recovery(vfs: Arc<dyn Vfs>, dir: &Path, config: LogConfig) -> Result<Recovery> {
        config.validate()?;
        let path = dir.join(LOG_FILE);
        // A leftover of a resize that did not reach its rename: the old file is the log.
        let new_path = dir.join(LOG_FILE_NEW);
        if vfs.exists(&new_path)? {
            tracing::warn!(target: "quire::log", "removing {} left by an interrupted resize", new_path.display());
            vfs.delete(&new_path)?;
            vfs.sync_dir(dir)?;
        }
        let inner = match vfs.open(&path, open_opts(&config, OpenOptions::existing())) {
            Ok(f) => f,
            Err(e) if e.kind == ErrorKind::NotFound => return Err(LogError::Missing { path }),
            Err(e) => return Err(e.into()),
        };
        let len = inner.len()?;
        if len < DATA_START {
            return Err(corrupt(
                &path,
                format!("the file is {len} bytes, shorter than its {DATA_START}-byte header"),
            ));
        }
        let mut hb = vec![0u8; BLOCK as usize];
        read_raw(&*inner, HEADER_OFFSET, &mut hb)?;
        let header = FileHeader::decode(&hb).map_err(|w| corrupt(&path, w))?;
        let file = LogFile::new(inner, header.capacity)?;

        let mut slots = Vec::new();
        let mut why = Vec::new();
        for (i, off) in SLOT_OFFSETS.iter().enumerate() {
            let b = file.read_block(*off)?;
            match CheckpointSlot::decode(&b) {
                Ok(s) if s.capacity != header.capacity => why.push(format!(
                    "checkpoint slot {i}: capacity {} differs from the header's {}",
                    s.capacity, header.capacity
                )),
                Ok(s) => slots.push((i, s)),
                Err(w) => why.push(format!("checkpoint slot {i}: {w}")),
            }
        }
        let Some(&(newest, slot)) = slots.iter().max_by_key(|(_, s)| s.seq) else {
            return Err(corrupt(
                &path,
                format!("no valid checkpoint ({})", why.join("; ")),
            ));
        };
        if !why.is_empty() {
            tracing::warn!(target: "quire::log", "{}: using checkpoint slot {newest}: {}", path.display(), why.join("; "));
        }
        let max_epoch = slots.iter().map(|(_, s)| s.epoch).max().unwrap_or(0);
        let file = Arc::new(file);
        let reader = LogReader::new(Arc::clone(&file), slot.checkpoint_lsn, None)?;
        Ok(Recovery {
            vfs,
            dir: dir.to_path_buf(),
            config,
            created: header.created_lsn,
            file,
            newest_slot: newest,
            slot,
            max_epoch,
            reader,
            frames: 0,
        })
    }
}

fn read_raw(f: &dyn quire_io::VfsFile, off: u64, buf: &mut [u8]) -> Result<()> {
    // The header is read through an aligned buffer in case the file is O_DIRECT.
    let mut a = quire_io::AlignedBuf::zeroed(buf.len(), BLOCK as usize);
    f.read_exact_at(&mut a, off)?;
    buf.copy_from_slice(&a);
    Ok(())
}

/// The log opened for recovery: iterate to get the frames after the checkpoint, in order,
/// then [`Recovery::into_log`] to append after them.
#[derive(Debug)]
pub struct Recovery {
    vfs: Arc<dyn Vfs>,
    dir: PathBuf,
    config: LogConfig,
    /// The header's `created_lsn`.
    created: Lsn,
    file: Arc<super::file::LogFile>,
    newest_slot: usize,
    slot: CheckpointSlot,
    max_epoch: u32,
    reader: LogReader,
    frames: u64,
}

impl Recovery {
    /// Where recovery starts: the newest valid checkpoint.
    pub fn checkpoint_lsn(&self) -> Lsn {
        self.slot.checkpoint_lsn
    }
    pub fn capacity(&self) -> u64 {
        self.file.capacity
    }
    /// The end of the frames read so far.
    pub fn position(&self) -> Lsn {
        self.reader.position()
    }

    /// Makes the log durable up to everything read so far (an fdatasync of the file).
    /// After a process crash the frames may be in the OS page cache only; recovery calls
    /// this before it writes a page or changes the directory on their account, so a power
    /// loss during recovery cannot keep such a change and lose its redo (write-ahead rule).
    pub fn sync_read_frames(&self) {
        self.file.handle.sync_data();
    }

    /// Reads any remaining frames, makes the next epoch durable, and opens the log for
    /// appending at the end of the log.
    pub fn into_log(mut self) -> Result<Log> {
        for f in self.reader.by_ref() {
            f?;
            self.frames += 1;
        }
        let end = self.reader.position();
        // With O_DIRECT the new run rewrites the block holding `end`: frames in it count as
        // durable again only after a padded sync (invariant 6 in `writer`).
        let stable = self.reader.stable_position();
        let Recovery {
            vfs,
            dir,
            config,
            created,
            file,
            newest_slot,
            slot: newest,
            max_epoch,
            reader,
            frames,
        } = self;
        // The reader held the only other reference to the file.
        drop(reader);
        let file = Arc::into_inner(file)
            .ok_or_else(|| LogError::BadConfig("the log file is still shared".into()))?;
        let need = DATA_START + file.capacity;
        if file.handle.len()? < need {
            // A truncated file: the missing tail reads as zeros, the end of the log.
            file.handle.set_len(need)?;
        }
        // The next run's epoch is durable before anything is appended (docs: stale tails).
        let epoch = max_epoch + 1;
        let other = newest_slot ^ 1;
        let slot = CheckpointSlot {
            checkpoint_lsn: newest.checkpoint_lsn,
            capacity: file.capacity,
            seq: newest.seq + 1,
            epoch,
            durable_lsn: end,
        };
        let mut b = file.buf(BLOCK as usize);
        slot.encode(&mut b);
        file.write_block(SLOT_OFFSETS[other], &b);
        file.handle.sync_data();

        // The O_DIRECT writer rewrites the block holding `end`: start from its bytes.
        let blk = file.io_block;
        let blk_start = end.0 - end.0 % blk;
        let mut tail = vec![0u8; (end.0 - blk_start) as usize];
        if !tail.is_empty() {
            let mut a = file.buf(blk as usize);
            file.read_data(blk_start, &mut a, file.handle.len()?)?;
            let n = tail.len();
            tail.copy_from_slice(&a[..n]);
        }
        tracing::info!(
            target: "quire::log",
            "opened {}: checkpoint {}, end {end}, {} frames after the checkpoint, epoch {epoch}",
            file.path().display(), newest.checkpoint_lsn, frames
        );
        let start = Start {
            file,
            end,
            checkpoint: newest.checkpoint_lsn,
            ckpt: CkptState {
                seq: slot.seq,
                next_slot: newest_slot,
            },
            epoch,
            tail,
            stable,
            created,
        };
        Log::start(Shared::new(vfs, dir, config, start))
    }
}

impl Recovery {
    /// The next frame, its payload borrowed until the next call (see [`LogReader::next_ref`]).
    pub fn next_ref(&mut self) -> Option<Result<super::reader::FrameRef<'_>>> {
        let f = self.reader.next_ref();
        if matches!(f, Some(Ok(_))) {
            self.frames += 1;
        }
        f
    }
}

impl Iterator for Recovery {
    type Item = Result<Frame>;
    fn next(&mut self) -> Option<Result<Frame>> {
        let f = self.reader.next();
        if matches!(f, Some(Ok(_))) {
            self.frames += 1;
        }
        f
    }
}
