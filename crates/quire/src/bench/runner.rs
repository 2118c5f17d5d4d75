//! Runs a workload on N threads for S seconds: prints throughput once a second, then one
//! summary line of `key=value` pairs, and writes the time series as CSV and an SVG plot.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use parking_lot::Mutex;

/// One transaction of a workload, run by thread `thread` (0-based). `Ok(false)`: this thread
/// has no more work (a fill that ran out of keys); the run ends when every thread is done.
pub type TxnFn<'a> = dyn Fn(usize) -> Result<bool, String> + Sync + 'a;
/// Extra per-second series and final counters of a workload, as (name, value).
pub type GaugesFn<'a> = dyn Fn() -> Vec<(&'static str, f64)> + Sync + 'a;

pub struct RunSpec<'a> {
    pub workload: &'a str,
    pub threads: usize,
    pub seconds: f64,
    pub out_dir: Option<&'a Path>,
}

/// One second of the run.
#[derive(Debug, Clone)]
pub struct Sample {
    pub t_s: f64,
    pub tps: f64,
    pub gauges: Vec<(&'static str, f64)>,
}

pub struct RunResult {
    pub seconds: f64,
    pub txns: u64,
    pub tps: f64,
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub samples: Vec<Sample>,
    pub files: Vec<PathBuf>,
}

/// Runs `txn` on `spec.threads` threads until `spec.seconds` have passed or every thread
/// has run out of work. A failing transaction stops the run with its error. The threads are
/// scoped, so `txn` may borrow (a `Table<'_>`, for example).
pub fn run(
    spec: &RunSpec<'_>,
    txn: &TxnFn<'_>,
    gauges: &GaugesFn<'_>,
) -> Result<RunResult, String> {
    let stop = AtomicBool::new(false);
    let count = AtomicU64::new(0);
    let live = AtomicUsize::new(spec.threads);
    let error: Mutex<Option<String>> = Mutex::new(None);
    let hist = Mutex::new(new_hist());
    let start = Instant::now();
    let mut samples = Vec::new();
    std::thread::scope(|scope| {
        for t in 0..spec.threads {
            let (stop, count, live, error, hist) = (&stop, &count, &live, &error, &hist);
            scope.spawn(move || {
                let mut local = new_hist();
                while !stop.load(Ordering::Relaxed) {
                    let t0 = Instant::now();
                    match txn(t) {
                        Ok(true) => {}
                        Ok(false) => break,
                        Err(e) => {
                            *error.lock() = Some(e);
                            stop.store(true, Ordering::Relaxed);
                            break;
                        }
                    }
                    let us = t0.elapsed().as_micros() as u64;
                    let _ = local.record(us.max(1));
                    count.fetch_add(1, Ordering::Relaxed);
                }
                let _ = hist.lock().add(&local);
                live.fetch_sub(1, Ordering::Relaxed);
            });
        }
        let mut last = 0u64;
        let mut next = Duration::from_secs(1);
        let total = Duration::from_secs_f64(spec.seconds);
        while !stop.load(Ordering::Relaxed) && live.load(Ordering::Relaxed) > 0 {
            let now = start.elapsed();
            if now >= total {
                break;
            }
            let wake = next.min(total);
            std::thread::sleep(wake.saturating_sub(now).min(Duration::from_millis(20)));
            if start.elapsed() >= next {
                let c = count.load(Ordering::Relaxed);
                let g = gauges();
                let tps = (c - last) as f64;
                let extra: String = g
                    .iter()
                    .map(|(k, v)| format!(" {k}={}", fmt_num(*v)))
                    .collect();
                println!("[{:>4.0}s] tps={tps:.0}{extra}", next.as_secs_f64());
                let _ = std::io::stdout().flush();
                samples.push(Sample {
                    t_s: next.as_secs_f64(),
                    tps,
                    gauges: g,
                });
                last = c;
                next += Duration::from_secs(1);
            }
        }
        stop.store(true, Ordering::Relaxed);
    });
    let seconds = start.elapsed().as_secs_f64();
    if let Some(e) = error.lock().take() {
        return Err(e);
    }
    let txns = count.load(Ordering::Relaxed);
    let h = hist.lock();
    let ms = |q: f64| h.value_at_quantile(q) as f64 / 1000.0;
    let mut result = RunResult {
        seconds,
        txns,
        tps: txns as f64 / seconds,
        p50_ms: ms(0.50),
        p95_ms: ms(0.95),
        p99_ms: ms(0.99),
        samples,
        files: Vec::new(),
    };
    if let Some(dir) = spec.out_dir {
        result.files = write_series(dir, spec, &result).map_err(|e| e.to_string())?;
    }
    Ok(result)
}

fn new_hist() -> Histogram<u64> {
    // 1 µs .. 100 s at 3 significant digits; the bounds are constants, so this cannot fail.
    Histogram::new_with_bounds(1, 100_000_000, 3).unwrap_or_else(|_| {
        Histogram::new(3).unwrap_or_else(|_| unreachable!("3 significant digits is valid"))
    })
}

pub fn fmt_num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v:.3}")
    }
}

fn write_series(dir: &Path, spec: &RunSpec<'_>, r: &RunResult) -> std::io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let stem = format!("{}-{}t", spec.workload, spec.threads);
    let csv = dir.join(format!("{stem}.csv"));
    let mut f = std::fs::File::create(&csv)?;
    let names: Vec<&str> = r
        .samples
        .first()
        .map(|s| s.gauges.iter().map(|g| g.0).collect())
        .unwrap_or_default();
    writeln!(
        f,
        "t_s,tps{}",
        names.iter().map(|n| format!(",{n}")).collect::<String>()
    )?;
    for s in &r.samples {
        let g: String = s
            .gauges
            .iter()
            .map(|(_, v)| format!(",{}", fmt_num(*v)))
            .collect();
        writeln!(f, "{},{}{g}", s.t_s, s.tps)?;
    }
    let svg = dir.join(format!("{stem}.svg"));
    crate::bench::plot::tps_plot(
        &svg,
        &format!("{} ({} threads)", spec.workload, spec.threads),
        &r.samples,
    )
    .map_err(std::io::Error::other)?;
    Ok(vec![csv, svg])
}
