//! Counter dimensions: which instances a counter reports on the simulated
//! gfx942 and how an instance id encodes its position in each dimension.
//!
//! Modelled from the SDK's sources:
//! - counters/id_decode.hpp: an instance id is the counter id in the top 16
//!   bits and 48 dimension bits below, 6 bits per dimension
//!   (`DIM_BIT_LENGTH / ROCPROFILER_DIMENSION_LAST`), dimension `d` (1..=7:
//!   XCC, AID, SHADER_ENGINE, AGENT, SHADER_ARRAY, WGP, INSTANCE) at bit
//!   `(d - 1) * 6` (`set_dim_in_rec`, `rec_to_dim_pos`); dimension 0
//!   (`DIMENSION_NONE`) reads all 48 bits. id_decode.cpp `dimension_map`
//!   names them `DIMENSION_XCC`, ...
//! - counters/dimensions.cpp `getBlockDimensions`: a hardware counter has
//!   the dimensions aqlprofile reports for its block's events; aqlprofile's
//!   src/core/counter_dimensions.hpp (`EventAttribDimension`) gives an XCD
//!   dimension of `xcc_num` when there are several, then INSTANCE of the
//!   block's instance count, then SE of `se_num / xcc_num` for blocks with
//!   the per-SE attribute. On gfx942 (aqlprofile gfxip/gfx9/
//!   gfx9_block_table.h and src/core/gfx940_factory.cpp) SQ is one instance
//!   per SE, GRBM one instance without SE, TCC 16 instances without SE.
//!   aqlprofile's XCC and SE counts are the agent's `num_xcc` and
//!   `num_shader_banks` (the SDK's agent.cpp, building aqlprofile's agent
//!   info), which the simulated agents report (agents.rs).
//! - counters/evaluate_ast.cpp `set_dimensions`: a `reduce` with no
//!   dimension list leaves one `DIMENSION_INSTANCE` of size 1, and so does
//!   arithmetic over such operands: GPU_UTIL has that one dimension, and
//!   its one record's dimension bits are all 0 (`perform_reduction`).
//! - The SDK keeps a counter's dimensions in an unordered map, so their
//!   order is its implementation's; the simulator lists them by dimension
//!   id (XCC, SHADER_ENGINE, INSTANCE), and a tool must go by the ids.
//! - counters.cpp `rocprofiler_query_counter_info` (VERSION_1,
//!   `dim_permutations`): every instance the counter can report, the first
//!   dimension varying fastest, each with its position per dimension.
use super::agents::agents;
use rocprofiler_sys as sys;
use std::ffi::CStr;

/// Bits of an instance id below the counter id.
pub(crate) const DIM_BITS: u32 = 48;
/// Bits per dimension: 48 over `ROCPROFILER_DIMENSION_LAST` (8).
const BITS_PER_DIM: u32 = DIM_BITS / 8;

/// The SDK's dimension numbers (id_decode.hpp).
pub(crate) const XCC: u64 = 1;
pub(crate) const SHADER_ENGINE: u64 = 3;
pub(crate) const INSTANCE: u64 = 7;

/// One dimension of a counter: the SDK's id, name and number of positions.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Dimension {
    pub id: u64,
    pub name: &'static CStr,
    pub size: usize,
}

fn dimension(id: u64, size: usize) -> Dimension {
    let name = match id {
        XCC => c"DIMENSION_XCC",
        SHADER_ENGINE => c"DIMENSION_SHADER_ENGINE",
        _ => c"DIMENSION_INSTANCE",
    };
    Dimension { id, name, size }
}

/// The simulated GPU's XCCs and shader engines (all GPU agents are alike).
fn topology() -> (usize, usize) {
    agents()
        .list
        .iter()
        .find(|a| a.type_ == sys::rocprofiler_agent_type_t::GPU)
        .map_or((1, 1), |a| {
            (
                a.num_xcc.max(1) as usize,
                a.num_shader_banks.max(1) as usize,
            )
        })
}

/// A counter's dimensions by its block ("" for a derived counter), in
/// dimension id order.
pub(crate) fn dimensions(block: &CStr) -> Vec<Dimension> {
    let (xccs, engines) = topology();
    let (instances, per_se) = match block.to_bytes() {
        b"SQ" => (1, true),
        b"GRBM" => (1, false),
        b"TCC" => (16, false),
        _ => return vec![dimension(INSTANCE, 1)],
    };
    let mut dims = Vec::new();
    if xccs > 1 {
        dims.push(dimension(XCC, xccs));
    }
    if per_se {
        dims.push(dimension(SHADER_ENGINE, engines / xccs));
    }
    dims.push(dimension(INSTANCE, instances));
    dims
}

/// id_decode.hpp `set_dim_in_rec` for dimensions 1..=7.
fn with_position(id: u64, dim: u64, pos: usize) -> u64 {
    let shift = (dim - 1) as u32 * BITS_PER_DIM;
    let mask = ((1u64 << BITS_PER_DIM) - 1) << shift;
    (id & !mask) | ((pos as u64) << shift)
}

/// id_decode.hpp `rec_to_dim_pos`: dimension 0 reads all 48 bits; a
/// dimension number past the last reads what its bits would hold (the SDK
/// does not check either).
pub(crate) fn position(id: u64, dim: u64) -> u64 {
    if dim == 0 {
        return id & ((1u64 << DIM_BITS) - 1);
    }
    let shift = (dim.saturating_sub(1) as u32).saturating_mul(BITS_PER_DIM);
    id.checked_shr(shift).unwrap_or(0) & ((1u64 << BITS_PER_DIM) - 1)
}

/// Every instance of counter `counter` with dimensions `dims`, in the
/// SDK's order (first dimension fastest): its id and its positions.
pub(crate) fn instances(counter: u64, dims: &[Dimension]) -> Vec<(u64, Vec<usize>)> {
    let count: usize = dims.iter().map(|d| d.size).product();
    (0..count)
        .map(|ordinal| {
            let mut rest = ordinal;
            let mut id = counter << DIM_BITS;
            let mut positions = Vec::with_capacity(dims.len());
            for d in dims {
                let pos = rest % d.size;
                rest /= d.size;
                id = with_position(id, d.id, pos);
                positions.push(pos);
            }
            (id, positions)
        })
        .collect()
}

/// Splits a count over `parts` instances so that they sum to it exactly:
/// each gets an equal share, and the remainder goes one each to the
/// instances from `rotate % parts` on (deterministic, and not always the
/// first ones).
pub(crate) fn split(total: u64, parts: usize, rotate: u64) -> Vec<u64> {
    let parts = parts.max(1) as u64;
    let (share, extra) = (total / parts, total % parts);
    (0..parts)
        .map(|i| share + u64::from((i + parts - rotate % parts) % parts < extra))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_round_trip_through_the_sdk_bit_layout() {
        let id = with_position(with_position(5 << DIM_BITS, XCC, 7), SHADER_ENGINE, 3);
        assert_eq!(id, (5 << DIM_BITS) | 7 | (3 << 12));
        assert_eq!(position(id, XCC), 7);
        assert_eq!(position(id, SHADER_ENGINE), 3);
        assert_eq!(position(id, INSTANCE), 0);
        assert_eq!(position(id, 0), 7 | (3 << 12));
    }

    #[test]
    fn splits_sum_to_the_total() {
        for (total, parts, rotate) in [(0, 8, 0), (7, 8, 3), (1025, 32, 9), (64, 1, 5)] {
            let s = split(total, parts, rotate);
            assert_eq!(s.len(), parts);
            assert_eq!(s.iter().sum::<u64>(), total);
            assert!(s.iter().max().unwrap() - s.iter().min().unwrap() <= 1);
        }
        assert_eq!(split(3, 4, 1), [0, 1, 1, 1]);
    }
}
