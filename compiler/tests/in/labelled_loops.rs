use cuprum::prelude::*;

/// Labelled `break` and `continue` out of nested loops.
#[rawkernel]
pub fn find_pair(a: &[i32], target: i32, found: &mut [u32], n: u32) {
    let mut hit_i = n;
    let mut hit_j = n;
    'outer: for i in 0..n {
        if a[i as usize] < 0 {
            continue 'outer;
        }
        let mut j = i + 1;
        'inner: while j < n {
            if a[j as usize] < 0 {
                j += 1;
                continue 'inner;
            }
            if a[i as usize] + a[j as usize] == target {
                hit_i = i;
                hit_j = j;
                break 'outer;
            }
            if a[j as usize] > target {
                break 'inner;
            }
            j += 1;
        }
    }
    found[0] = hit_i;
    found[1] = hit_j;
}

/// A labelled `loop` with `break 'label value` from an inner loop.
#[elementwise]
pub fn first_divisor(x: u32) -> u32 {
    let d = 'search: loop {
        for k in 2..x {
            if x % k == 0 {
                break 'search k;
            }
        }
        break x;
    };
    d
}

/// `continue 'rows` from an inner loop: skips the rest of the row.
#[rawkernel]
pub fn row_prefix_until_negative(m: &[f32], out: &mut [f32], rows: u32, cols: u32) {
    'rows: for r in 0..rows {
        let mut acc = 0.0f32;
        for c in 0..cols {
            let v = m[(r * cols + c) as usize];
            if v < 0.0 {
                out[r as usize] = acc;
                continue 'rows;
            }
            acc += v;
        }
        out[r as usize] = acc;
    }
}
