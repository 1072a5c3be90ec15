//! A counter's instances as the SDK's catalog describes them
//! (counters.h): `rocprofiler_query_counter_info` VERSION_1 lists each
//! counter's dimensions and every instance it reports, and
//! `rocprofiler_query_record_dimension_position` gives an instance's
//! position in each dimension. Read when a counter config is made (never
//! per record) and turned into each instance's args key.
use crate::vocabulary::counter_instance_key;
use rocprofiler_sys::*;
use std::ffi::c_void;

/// A counter's instances as the catalog describes them: each instance id
/// and its args key, with the positions in dimension id order.
pub fn counter_instances(
    sdk: &Sdk,
    id: rocprofiler_counter_id_t,
    name: &str,
) -> Option<Vec<(u64, String)>> {
    // SAFETY: all-zero is a valid info struct (null pointers, zero counts).
    let mut info: rocprofiler_counter_info_v1_t = unsafe { std::mem::zeroed() };
    // SAFETY: VERSION_1 with a v1 struct.
    let status = unsafe {
        (sdk.query_counter_info)(
            id,
            rocprofiler_counter_info_version_id_t::V1,
            &mut info as *mut _ as *mut c_void,
        )
    };
    if !status.is_success() || info.dimensions.is_null() || info.dimensions_instances.is_null() {
        return None;
    }
    // SAFETY: the SDK's arrays hold their counts of pointers to structs
    // that, with their names, live as long as it.
    let mut dims: Vec<(u64, String)> = unsafe {
        std::slice::from_raw_parts(info.dimensions, info.dimensions_count as usize)
            .iter()
            .filter(|d| !d.is_null())
            .map(|d| Some(((**d).id, c_str_lossy((**d).name)?)))
            .collect::<Option<_>>()?
    };
    dims.sort_by_key(|(dim, _)| *dim);
    // SAFETY: as above.
    let instances = unsafe {
        std::slice::from_raw_parts(
            info.dimensions_instances,
            info.dimensions_instances_count as usize,
        )
    };
    instances
        .iter()
        .filter(|i| !i.is_null())
        .map(|i| {
            // SAFETY: a non-null pointer of the SDK's array.
            let instance = unsafe { (**i).instance_id };
            let positions = dims
                .iter()
                .map(|(dim, dim_name)| {
                    let mut pos = 0usize;
                    // SAFETY: a valid out-pointer.
                    let status =
                        unsafe { (sdk.query_record_dimension_position)(instance, *dim, &mut pos) };
                    status.is_success().then_some((dim_name.as_str(), pos))
                })
                .collect::<Option<Vec<_>>>()?;
            Some((instance, counter_instance_key(name, &positions)))
        })
        .collect()
}
