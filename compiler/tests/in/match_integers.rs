use cuprum::prelude::*;

/// `match` on integers: literals, inclusive and exclusive ranges, `|`, guards, a binding, `_`,
/// and `match` as an expression.
#[elementwise]
pub fn classify(code: i32) -> i32 {
    match code {
        0 => 100,
        1 | 2 | 3 => 200,
        4..=9 => 300 + code,
        10..20 => 400,
        n if n < 0 => -n,
        i32::MAX => 0,
        other => other % 7,
    }
}

/// `match` on an unsigned value used as a statement, with block arms.
#[rawkernel]
pub fn opcode(ops: &[u8], acc: &mut [i64], n: u32) {
    let i = grid_1d();
    if i >= n {
        return;
    }
    let mut v = acc[i as usize];
    match ops[i as usize] {
        0 => {}
        1 => v += 1,
        2 => {
            v *= 2;
        }
        b'a'..=b'z' => v = -v,
        x @ 200..=255 => v += x as i64,
        _ => v = 0,
    }
    acc[i as usize] = v;
}

/// `match` on `bool` needs no `_` arm.
#[elementwise]
pub fn select(c: bool, a: f32, b: f32) -> f32 {
    match c {
        true => a,
        false => b,
    }
}
