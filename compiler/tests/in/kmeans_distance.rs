use cuprum::prelude::*;

/// k-means assignment step (CuPy's kmeans example): the nearest centroid of each point by squared
/// Euclidean distance, with a fused elementwise distance kernel.
#[elementwise]
pub fn squared_distance<T: Float>(x: T, y: T, cx: T, cy: T) -> T {
    let dx = x - cx;
    let dy = y - cy;
    dx * dx + dy * dy
}

#[rawkernel]
pub fn assign_clusters<T: Float>(points: View<T, 2>, centers: View<T, 2>, labels: &mut [i32], counts: &mut [u32]) {
    let i = grid_1d() as usize;
    let n = points.shape()[0];
    let dims = points.shape()[1];
    let k = centers.shape()[0];
    if i >= n {
        return;
    }
    let mut best = T::infinity();
    let mut best_j = -1i32;
    for j in 0..k {
        let mut d = T::zero();
        for c in 0..dims {
            let diff = points[[i, c]] - centers[[j, c]];
            d = diff.mul_add(diff, d);
        }
        if d < best {
            best = d;
            best_j = j as i32;
        }
    }
    labels[i] = best_j;
    if best_j >= 0 {
        atomic_add(counts, best_j, 1);
    }
}
