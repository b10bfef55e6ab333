//! Which plan `desugar` picks, and what a row kernel writes.

use super::{desugar, Passes, RowResult};
use crate::attr_kind::AttrKind;

fn plan(src: &str) -> Result<super::Fused, syn::Error> {
    let f: syn::ItemFn = syn::parse_str(src).unwrap();
    desugar(&f, proc_macro2::TokenStream::new(), &|_| None)
}

/// The `keepdims` of a per-row result, or `None` for a result of the rows' elements.
fn per_row(src: &str) -> Option<bool> {
    let fused = plan(src).unwrap_or_else(|e| panic!("{src}: {e}"));
    assert_eq!(fused.kind, AttrKind::RawKernel, "{src}");
    let Passes::Rows { result, .. } = fused.passes else { panic!("{src}: not a row kernel: {:?}", fused.passes) };
    match result {
        RowResult::Elements => None,
        RowResult::PerRow { keepdims } => match *keepdims {
            syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Bool(b), .. }) => Some(b.value),
            other => panic!("{src}: keepdims {other:?}"),
        },
    }
}

#[test]
fn log_sum_exp_is_a_row_kernel_with_one_value_per_row() {
    let kept = "fn logsumexp(x: &Array<f32>) -> Result<Array<f32>> {
        let m = x.max().axis(-1).keepdims(true).run()?;
        let s = (x - &m)?.exp()?.sum().axis(-1).keepdims(true).run()?;
        &s.log()? + &m
    }";
    assert_eq!(per_row(kept), Some(true));
    // The log is the kernel language's natural logarithm, `ln`.
    let kernel = quote::ToTokens::to_token_stream(&plan(kept).unwrap().kernel).to_string();
    assert!(kernel.contains(". ln ()") && !kernel.contains(". log ()"), "{kernel}");
}

#[test]
fn a_last_reduction_without_keepdims_drops_the_axis() {
    let src = "fn sum_exp(x: &Array<f32>) -> Result<Array<f32>> {
        let m = x.max().axis(-1).keepdims(true).run()?;
        (x - &m)?.exp()?.sum().axis(-1).run()
    }";
    assert_eq!(per_row(src), Some(false));
    let kept = src.replace(".axis(-1).run()", ".axis(-1).keepdims(true).run()");
    assert_eq!(per_row(&kept), Some(true));
}

#[test]
fn arithmetic_on_one_kept_reduction_is_per_row() {
    assert_eq!(per_row("fn f(x: &Array<f64>) -> Result<Array<f64>> { x.sum().axis(-1).keepdims(true).run()?.log() }"), Some(true));
}

#[test]
fn softmax_writes_the_rows_elements() {
    let src = "fn softmax(x: &Array<f32>) -> Result<Array<f32>> {
        let m = x.max().axis(-1).keepdims(true).run()?;
        let e = (x - &m)?.exp()?;
        let s = e.sum().axis(-1).keepdims(true).run()?;
        &e / &s
    }";
    assert_eq!(per_row(src), None);
}

#[test]
fn one_reduction_alone_stays_a_reduction() {
    let fused = plan("fn f(x: &Array<f32>) -> Result<Array<f32>> { x.exp()?.sum().axis(-1).run() }").unwrap();
    assert!(matches!(fused.passes, Passes::Reduce { .. }), "{:?}", fused.passes);
}

#[test]
fn a_last_reduction_over_other_axes_is_refused() {
    for end in [".sum().run()", ".sum().axes([0, 1]).run()"] {
        let src = format!(
            "fn f(x: &Array<f32>) -> Result<Array<f32>> {{
                let m = x.max().axis(-1).keepdims(true).run()?;
                (x - &m)?.exp()?{end}
            }}"
        );
        let e = plan(&src).err().unwrap_or_else(|| panic!("{src} was accepted")).to_string();
        assert!(e.contains("ends in a reduction after other reductions reduces the last axis"), "{e}");
    }
}

#[test]
fn a_mean_is_refused_as_the_only_reduction_but_not_after_others() {
    let e = plan("fn f(x: &Array<f32>) -> Result<Array<f32>> { x.mean().axis(-1).run() }").expect_err("refused").to_string();
    assert!(e.contains("whose only reduction is its result") && e.contains("divided after the call"), "{e}");
    let after = "fn f(x: &Array<f32>) -> Result<Array<f32>> {
        let m = x.mean().axis(-1).keepdims(true).run()?;
        let d = (x - &m)?;
        (&d * &d)?.mean().axis(-1).run()
    }";
    assert_eq!(per_row(after), Some(false));
}
