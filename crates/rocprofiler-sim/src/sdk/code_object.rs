//! CODE_OBJECT callbacks (rocprofiler-sdk code_object.cpp, SDK-1.0; the
//! payloads as callback_tracing.h lines 248-266 declare them): when a code object loads, each
//! kernel's DEVICE_KERNEL_SYMBOL_REGISTER (kernel id -> name, descriptor
//! address), and for kernels a program launches through a host stub the
//! HOST_KERNEL_SYMBOL_REGISTER (`hip_register_function` wraps
//! `__hipRegisterFunction`: `host_function` is the stub, same kernel id).
//! Phase LOAD (= ENTER) as code_object.cpp fires them.
use super::kernels::{host_stub, kernel_object, KernelSymbol};
use super::trace::{fire, select};
use rocprofiler_sys as sys;
use std::ffi::c_void;

const CODE_OBJECT_ID: u64 = 1;

fn fire_load(op: sys::rocprofiler_code_object_operation_t, payload: *mut c_void) {
    let kind = sys::rocprofiler_callback_tracing_kind_t::CODE_OBJECT.0;
    let mut slots = select(kind, op.0 as i32);
    if !slots.is_empty() {
        fire(
            &mut slots,
            kind,
            op.0 as i32,
            sys::rocprofiler_callback_phase_t::ENTER,
            0,
            payload,
        );
    }
}

/// The device symbol of a kernel (every kernel, blit kernels included).
pub(crate) fn device_symbol_registered(k: KernelSymbol) {
    let mut payload = sys::rocprofiler_callback_tracing_code_object_kernel_symbol_register_data_t {
        size: std::mem::size_of::<
            sys::rocprofiler_callback_tracing_code_object_kernel_symbol_register_data_t,
        >() as u64,
        kernel_id: k.id,
        code_object_id: CODE_OBJECT_ID,
        kernel_name: k.name,
        kernel_object: kernel_object(k.id),
        kernarg_segment_size: 64,
        kernarg_segment_alignment: 8,
        group_segment_size: 0,
        private_segment_size: 0,
        sgpr_count: 32,
        arch_vgpr_count: 32,
        accum_vgpr_count: 0,
        kernel_code_entry_byte_offset: 256,
        kernel_address: sys::rocprofiler_address_t::from_value(kernel_object(k.id)),
    };
    fire_load(
        sys::rocprofiler_code_object_operation_t::DEVICE_KERNEL_SYMBOL_REGISTER,
        &mut payload as *mut _ as *mut c_void,
    );
}

/// The host symbol of a kernel a program launches (not of blit kernels:
/// rocclr launches those internally, through no host stub).
pub(crate) fn host_symbol_registered(k: KernelSymbol) {
    let dim = |x| sys::rocprofiler_dim3_t { x, y: 1, z: 1 };
    let mut payload =
        sys::rocprofiler_callback_tracing_code_object_host_kernel_symbol_register_data_t {
            size: std::mem::size_of::<
                sys::rocprofiler_callback_tracing_code_object_host_kernel_symbol_register_data_t,
            >() as u64,
            host_function_id: k.id,
            kernel_id: k.id,
            code_object_id: CODE_OBJECT_ID,
            host_function: sys::rocprofiler_address_t::from_value(host_stub(k.id)),
            modules: sys::rocprofiler_address_t::from_value(0x6d00_0000),
            device_function: k.name,
            thread_limit: 1024,
            thread_ids: dim(0),
            block_ids: dim(0),
            block_dims: dim(0),
            grid_dims: dim(0),
            workgroup_size: 0,
        };
    fire_load(
        sys::rocprofiler_code_object_operation_t::HOST_KERNEL_SYMBOL_REGISTER,
        &mut payload as *mut _ as *mut c_void,
    );
}
