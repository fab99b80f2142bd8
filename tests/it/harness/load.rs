//! The machine-load sample taken before a run (`cpbench_harness::load`).

use cpbench_harness::load::{parse_stat, LoadSample};

#[test]
fn stat_lines_parse_into_busy_and_total() {
    // user nice system idle iowait irq softirq steal guest guest_nice
    let l = "cpu  100 5 50 1000 20 3 2 1 0 0";
    assert_eq!(parse_stat(l), Some((161, 1181)));
    assert_eq!(parse_stat("cpu 1 2"), None);
}

#[test]
fn busy_means_load_above_the_cores_or_others_above_a_tenth() {
    let s = LoadSample {
        loadavg_1min: Some(2.5),
        loadavg_5min: Some(1.0),
        others_cpu_share: Some(0.02),
    };
    assert!(s.busy(2) && !s.busy(4));
    let t = LoadSample {
        loadavg_1min: Some(0.1),
        loadavg_5min: None,
        others_cpu_share: Some(0.3),
    };
    assert!(t.busy(8));
    assert_eq!(
        t.describe(),
        "load 0.10 (1 min), other processes 30% of the CPUs"
    );
    assert!(!LoadSample::default().busy(2));
}

#[cfg(target_os = "linux")]
#[test]
fn a_sample_on_linux_has_every_field() {
    let s = LoadSample::now();
    assert!(s.loadavg_1min.is_some_and(|l| l >= 0.0));
    assert!(s.others_cpu_share.is_some_and(|x| (0.0..=1.0).contains(&x)));
}
