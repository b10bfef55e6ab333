//! Literal typing, case by case: each expression is the initializer of `let v = ..;` in a device
//! function, and the type checker must give `v`, and every literal of the expression, the types
//! rustc gives them (each expected type below is what rustc 1.95 infers for the same text, with
//! the prelude in scope; `testsuite/tests/literal_inference.rs` checks the accepted ones against
//! rustc itself). Cases that rustc rejects must be rejected too, at the same place.

use cuprum_compiler::diag::Diagnostics;
use cuprum_compiler::ir::{visit_children, Block, Expr, ExprKind, MatchPat, Module, Stmt, Ty};
use cuprum_compiler::{front, typeck};

/// The parameters every case can use.
const PARAMS: &str = "n: u32, i: u32, m: i32, k: i64, b: u8, x: f32, y: f64, s: &[f32], r: Raw<f32>, w: View<f32, 2>";

/// `ty` as rustc names it (`usize` is the kernel language's `u64`).
fn name(ty: &Ty) -> String {
    match ty {
        Ty::Scalar(d) => d.rust_name().to_string(),
        Ty::Unit => "()".into(),
        Ty::Tuple(ts) => format!("({})", ts.iter().map(name).collect::<Vec<_>>().join(", ")),
        other => format!("{other:?}"),
    }
}

fn literals<'a>(b: &'a Block, out: &mut Vec<&'a Expr>) {
    for s in &b.stmts {
        match s {
            Stmt::Let { init: Some(e), .. } | Stmt::Expr(e) => literals_in(e, out),
            Stmt::Let { init: None, .. } => {}
        }
    }
    if let Some(t) = &b.tail {
        literals_in(t, out);
    }
}

fn literals_in<'a>(e: &'a Expr, out: &mut Vec<&'a Expr>) {
    match &e.kind {
        ExprKind::Lit(_) => out.push(e),
        ExprKind::Match { arms, .. } => arms.iter().for_each(|a| pattern_literals(&a.pat, out)),
        _ => {}
    }
    let mut exprs = Vec::new();
    let mut blocks = Vec::new();
    visit_children(e, &mut |c| exprs.push(c), &mut |b| blocks.push(b));
    exprs.into_iter().for_each(|c| literals_in(c, out));
    blocks.into_iter().for_each(|b| literals(b, out));
}

fn pattern_literals<'a>(p: &'a MatchPat, out: &mut Vec<&'a Expr>) {
    match p {
        MatchPat::Lit(e) => literals_in(e, out),
        MatchPat::Range { lo, hi, .. } => {
            literals_in(lo, out);
            literals_in(hi, out);
        }
        MatchPat::Or(ps) => ps.iter().for_each(|p| pattern_literals(p, out)),
        MatchPat::Bind(_, p) => pattern_literals(p, out),
        MatchPat::Wild(_) => {}
    }
}

/// Errors as `(message, line, column)`, columns from 1.
type Errors = Vec<(String, usize, usize)>;

/// Type-checks `src`: its errors, else the module and its types.
fn check(src: &str) -> (Errors, Option<(Module, Vec<typeck::Types>)>) {
    let file = syn::parse_file(src).unwrap_or_else(|e| panic!("not Rust: {e}\n{src}"));
    let mut diags = Diagnostics::new();
    let module = front::lower_file(&file, &mut diags);
    assert!(diags.is_empty(), "front-end errors in {src}");
    let types = typeck::check(&module, &mut diags);
    match diags.finish() {
        Ok(()) => (Vec::new(), Some((module, types))),
        Err(e) => (e.into_iter().map(|e| (e.to_string(), e.span().start().line, e.span().start().column + 1)).collect(), None),
    }
}

/// The type of `v` in `let v = {expr};` and the types of the literals of `expr`, in source order.
fn typed(expr: &str) -> Result<(String, Vec<String>), Errors> {
    let src = format!("#[device]\nfn probe({PARAMS}) {{\n    let v = {expr};\n}}\n");
    let (errors, typed) = check(&src);
    let Some((module, types)) = typed else { return Err(errors) };
    let item = &module.items[0];
    let Stmt::Let { init: Some(init), .. } = &item.body.stmts[0] else { panic!("the probe starts with `let v`") };
    let v = item.locals.iter().position(|l| l.name.text == "v").unwrap();
    let mut lits = Vec::new();
    literals_in(init, &mut lits);
    lits.sort_by_key(|e| (e.span.start().line, e.span.start().column));
    Ok((name(&types[0].locals[v]), lits.iter().map(|e| name(types[0].of(e))).collect()))
}

#[test]
fn the_reported_case_is_accepted() {
    // Issue 15 item 8: a literal among `u32` operands under `as usize` is a `u32`.
    let src = "#[device]\nfn rev(x: &[f32], y: &mut [f32], n: u32, i: u32) {\n    y[(n - 1 - i) as usize] = x[i as usize];\n    y[(2 * n - 1 - i) as usize] = x[(i + 1) as usize];\n}\n";
    let (errors, _) = check(src);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(typed("(2 * n - 1 - i) as usize"), Ok(("u64".into(), vec!["u32".into(), "u32".into()])));
}

#[test]
fn literals_are_typed_as_rustc_types_them() {
    let u32_ = "u32";
    // (expression, type of `v`, types of its literals in source order)
    let cases: &[(&str, &str, &[&str])] = &[
        // A cast never constrains its operand.
        ("(n - 1 - i) as usize", "u64", &[u32_]),
        ("(k - 1) as u8", "u8", &["i64"]),
        ("(1 << 31) as u64", "u64", &["i32", "i32"]),
        ("(200 + 100) as u8", "u8", &["i32", "i32"]),
        ("(if n > 0 { 300 } else { 1 }) as u8", "u8", &[u32_, "i32", "i32"]),
        ("1.max(2) as u64", "u64", &["i32", "i32"]),
        ("3 as f32", "f32", &["i32"]),
        ("[1, 2, 3][2] as u8", "u8", &["i32", "i32", "i32", "u64"]),
        // ... but offers its type to a literal operand, through `-`, `!` and a block's tail.
        ("3_000_000_000 as u32", "u32", &[u32_]),
        ("2_147_483_648 as i64", "i64", &["i64"]),
        ("-1 as i8", "i8", &["i8"]),
        ("!0 as u8", "u8", &["u8"]),
        ("{ 300 } as u16", "u16", &["u16"]),
        ("1.5 as f32", "f32", &["f32"]),
        // Shifts do not unify their operands.
        ("n << 2", u32_, &["i32"]),
        ("1 << n", "i32", &["i32"]),
        ("1u64 << n", "u64", &["u64"]),
        ("{ let t = 3; 1u8 << t }", "u8", &["i32", "u8"]),
        ("{ let t: u64 = 1 << 40; t }", "u64", &["u64", "i32"]),
        // Arithmetic and comparison operands unify, in any order and nesting.
        ("(n + 1) * 2 - i", u32_, &[u32_, u32_]),
        ("2 * n", u32_, &[u32_]),
        ("n > 1", "bool", &[u32_]),
        ("1 < k", "bool", &["i64"]),
        ("(n as i64 - 1) * 2", "i64", &["i64", "i64"]),
        ("i32::MAX as i64 + 1", "i64", &["i64"]),
        ("3_000_000_000 + k", "i64", &["i64"]),
        ("1 + 2", "i32", &["i32", "i32"]),
        ("x * 2.0 + 1.0", "f32", &["f32", "f32"]),
        ("2.0 * x", "f32", &["f32"]),
        ("y / 3.0", "f64", &["f64"]),
        ("2.5 * 2.0", "f64", &["f64", "f64"]),
        // Method calls: arguments unify with the receiver; a literal receiver stays a literal.
        ("x.min(1.0)", "f32", &["f32"]),
        ("n.min(1)", u32_, &[u32_]),
        ("1.min(n)", u32_, &[u32_]),
        ("b.wrapping_add(1)", "u8", &["u8"]),
        ("n.pow(2)", u32_, &[u32_]),
        ("x.powi(2)", "f32", &["i32"]),
        ("5.pow(2)", "i32", &["i32", u32_]),
        ("5.count_ones()", u32_, &["i32"]),
        ("2.0.sqrt()", "f64", &["f64"]),
        ("{ let a = 2.0.sqrt(); let c: f32 = a; a }", "f32", &["f32"]),
        ("{ let d = 1.min(2); let e: u8 = d; d }", "u8", &["u8", "u8"]),
        // The error functions are `fn erf<T: Float>(x: T) -> T`: a literal argument stays one.
        ("erf(x)", "f32", &[]),
        ("erfcinv(2.0 * y)", "f64", &["f64"]),
        ("erf(0.5)", "f64", &["f64"]),
        ("x + normcdfinv(0.5)", "f32", &["f32"]),
        ("{ let a = erfinv(0.5); let c: f32 = a; a }", "f32", &["f32"]),
        // Locals: a literal bound by `let` takes the type of a later use.
        ("{ let e = 0; let g = e + n; e }", u32_, &[u32_]),
        ("{ let e = 7; e }", "i32", &["i32"]),
        ("{ let z; z = 5; let q: u16 = z; z }", "u16", &["u16"]),
        ("{ let mut c = 0; for j in 0..n { c += j; } c }", u32_, &[u32_, u32_]),
        ("{ let a = -1; a }", "i32", &["i32"]),
        ("{ let t = (1, 2.0); t.0 }", "i32", &["i32", "f64"]),
        // Branches unify; `match` exhaustiveness is judged at the scrutinee's final type.
        ("if n > 2 { 1 } else { 2 }", "i32", &[u32_, "i32", "i32"]),
        ("match n { 0 => 1u8, _ => 2 }", "u8", &[u32_, "u8", "u8"]),
        ("{ let q = 5; let o = match q { 0..=255 => 1, }; let c: u8 = q; o }", "i32", &["u8", "u8", "u8", "i32"]),
        // Indices: a slice takes `usize`; `Raw` and `View` take any `KernelIndex`, `i32` by default.
        ("s[1]", "f32", &["u64"]),
        ("r[1]", "f32", &["i32"]),
        ("w[[i, 1]]", "f32", &[u32_]),
        ("w[[0, 1]]", "f32", &["i32", "i32"]),
    ];
    let mut failures = Vec::new();
    for (expr, ty, lits) in cases {
        let want = Ok((ty.to_string(), lits.iter().map(|t| t.to_string()).collect::<Vec<_>>()));
        let got = typed(expr);
        if got != want {
            failures.push(format!("`{expr}`: expected {want:?}, got {got:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn typing_errors_rustc_gives_are_reported_at_their_spans() {
    // (expression, a piece of the message, the column of the error in `    let v = {expr};`)
    let at = |c: usize| 13 + c;
    let cases: &[(&str, &str, usize)] = &[
        ("300 as u8", "literal out of range for `u8`", at(0)),
        ("(300) as u8", "literal out of range for `u8`", at(1)),
        ("(3_000_000_000 + 0) as u64", "literal out of range for `i32`", at(1)),
        ("{ let big = 3_000_000_000; big }", "literal out of range for `i32`", at(12)),
        ("-1 as u8", "cannot negate a value of type `u8`", at(0)),
        ("{ let a = -1; let c: u32 = a; a }", "cannot negate a value of type `u32`", at(10)),
        ("(-3).abs()", "can't call method `abs` on ambiguous numeric type `{integer}`", at(5)),
        ("5.is_power_of_two()", "ambiguous numeric type `{integer}`", at(2)),
        ("2.0.to_bits()", "ambiguous numeric type `{float}`", at(4)),
        ("s[1 + i]", "slices and arrays are indexed by `usize`, found `u32`", at(2)),
        ("1 + 2.0", "expected `{integer}`, found `{float}`", at(4)),
        ("erf(1)", "`erf` takes a float", at(4)),
        ("erfc(m)", "`erfc` takes a float", at(5)),
        ("x.erf()", "`erf` is a free function in kernels, not a method: write `erf(x)`", at(2)),
        ("{ let q = 5; match q { 0..=127 => 1, 128..=255 => 2 } }", "non-exhaustive `match`: `-2147483648` is not covered", at(19)),
    ];
    let mut failures = Vec::new();
    for (expr, message, col) in cases {
        match typed(expr) {
            Ok(t) => failures.push(format!("`{expr}` was accepted as {t:?}; rustc rejects it")),
            Err(errors) => {
                if !errors.iter().any(|(m, line, c)| m.contains(message) && *line == 3 && c == col) {
                    failures.push(format!("`{expr}`: expected `{message}` at 3:{col}, got {errors:?}"));
                }
                if errors.len() != 1 {
                    failures.push(format!("`{expr}`: one mistake, one message; got {errors:?}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_literal_argument_meets_the_generic_bound_of_its_callee() {
    let src = "#[device]\nfn half<T: Float>(a: T) -> T { a }\n#[device]\nfn probe(x: f32) -> f32 {\n    let p = half(2.0);\n    let q = half(2);\n    x + half(1.0)\n}\n";
    let (errors, _) = check(src);
    assert_eq!(errors.len(), 1, "{errors:?}");
    let (m, line, col) = &errors[0];
    assert!(m.contains("`{integer}` does not satisfy `T: Float` of `half`"), "{m}");
    assert_eq!((*line, *col), (6, 13));
    // Accepted: `half(2.0)` alone is `f64`, `half(1.0)` added to an `f32` is `f32`.
    let src = "#[device]\nfn half<T: Float>(a: T) -> T { a }\n#[device]\nfn probe(x: f32) -> f32 {\n    let p = half(2.0);\n    x + half(1.0)\n}\n";
    let (errors, typed) = check(src);
    assert!(errors.is_empty(), "{errors:?}");
    let (module, types) = typed.unwrap();
    let probe = &module.items[1];
    let p = probe.locals.iter().position(|l| l.name.text == "p").unwrap();
    assert_eq!(name(&types[1].locals[p]), "f64");
    let tail = probe.body.tail.as_ref().unwrap();
    let ExprKind::Binary(_, _, call) = &tail.kind else { panic!("x + half(1.0)") };
    assert_eq!(name(types[1].of(call)), "f32");
}

#[test]
fn a_file_const_types_its_initializer() {
    // `const LIMIT: i64 = 1 << 40;` shifts an `i64` (a cast would shift an `i32`, and overflow).
    let src = "const LIMIT: i64 = 1 << 40;\nconst SMALL: u8 = 300;\n#[device]\nfn probe(n: i64) -> i64 {\n    n.min(LIMIT)\n}\n#[device]\nfn small() -> u8 {\n    SMALL\n}\n";
    let (errors, _) = check(src);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].0.contains("literal out of range for `u8`"), "{errors:?}");
    assert_eq!((errors[0].1, errors[0].2), (2, 19));
}
