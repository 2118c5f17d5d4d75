//! An SVG plot of throughput (and the workload's first gauge, if any) over time.

use std::path::Path;

use plotters::prelude::*;

use super::runner::Sample;

pub fn tps_plot(path: &Path, title: &str, samples: &[Sample]) -> Result<(), String> {
    let e = |e: &dyn std::fmt::Display| e.to_string();
    let root = SVGBackend::new(path, (900, 420)).into_drawing_area();
    root.fill(&WHITE).map_err(|x| e(&x))?;
    let t_max = samples.last().map(|s| s.t_s).unwrap_or(1.0).max(1.0);
    let tps_max = samples.iter().map(|s| s.tps).fold(1.0, f64::max) * 1.1;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(35)
        .y_label_area_size(60)
        .right_y_label_area_size(60)
        .build_cartesian_2d(0f64..t_max, 0f64..tps_max)
        .map_err(|x| e(&x))?;
    chart
        .configure_mesh()
        .x_desc("seconds")
        .y_desc("tps")
        .draw()
        .map_err(|x| e(&x))?;
    chart
        .draw_series(LineSeries::new(
            samples.iter().map(|s| (s.t_s, s.tps)),
            &BLUE,
        ))
        .map_err(|x| e(&x))?
        .label("tps")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLUE));
    if let Some((name, _)) = samples.first().and_then(|s| s.gauges.first()) {
        let g_max = samples
            .iter()
            .filter_map(|s| s.gauges.first().map(|g| g.1))
            .fold(1.0, f64::max)
            * 1.1;
        let mut chart = chart.set_secondary_coord(0f64..t_max, 0f64..g_max);
        chart
            .configure_secondary_axes()
            .y_desc(*name)
            .draw()
            .map_err(|x| e(&x))?;
        chart
            .draw_secondary_series(LineSeries::new(
                samples
                    .iter()
                    .filter_map(|s| s.gauges.first().map(|g| (s.t_s, g.1))),
                &RED,
            ))
            .map_err(|x| e(&x))?
            .label(*name)
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], RED));
        chart
            .configure_series_labels()
            .background_style(WHITE)
            .border_style(BLACK)
            .draw()
            .map_err(|x| e(&x))?;
    }
    root.present().map_err(|x| e(&x))?;
    Ok(())
}
