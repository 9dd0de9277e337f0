/* py_offsets_probe.c - prints, from one CPython's own headers (built with
 * -I its include dir by py_offsets.sh), the offsets the payload's table
 * (payload/python/offsets.c) claims for that version, one line in the
 * order py_offsets_dump.c prints them. */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <frameobject.h>
#include <stddef.h>
#include <stdio.h>
#if PY_VERSION_HEX >= 0x030b0000
#include "internal/pycore_frame.h"
#endif

int main(void)
{
    printf("minor=%d ts_interp=%zu", PY_MINOR_VERSION, offsetof(PyThreadState, interp));
#if PY_VERSION_HEX < 0x030b0000
    printf(" ts_frame=%zu cframe_current=- fr_back=%zu fr_code=%zu fr_instr=%zu fr_owner=- fr_is_entry=-",
           offsetof(PyThreadState, frame), offsetof(PyFrameObject, f_back), offsetof(PyFrameObject, f_code),
           offsetof(PyFrameObject, f_lasti));
    printf(" co_filename=%zu co_name=%zu", offsetof(PyCodeObject, co_filename), offsetof(PyCodeObject, co_name));
#if PY_VERSION_HEX < 0x030a0000
    printf(" co_firstlineno=%zu co_lines=%zu", offsetof(PyCodeObject, co_firstlineno), offsetof(PyCodeObject, co_lnotab));
#else
    printf(" co_firstlineno=%zu co_lines=%zu", offsetof(PyCodeObject, co_firstlineno),
           offsetof(PyCodeObject, co_linetable));
#endif
    printf(" co_code=%zu", offsetof(PyCodeObject, co_code));
#else
#if PY_VERSION_HEX < 0x030d0000
    printf(" ts_frame=%zu cframe_current=%zu fr_back=%zu fr_code=%zu fr_instr=%zu", offsetof(PyThreadState, cframe),
           offsetof(_PyCFrame, current_frame), offsetof(_PyInterpreterFrame, previous),
           offsetof(_PyInterpreterFrame, f_code), offsetof(_PyInterpreterFrame, prev_instr));
#else
    printf(" ts_frame=%zu cframe_current=- fr_back=%zu fr_code=%zu fr_instr=%zu", offsetof(PyThreadState, current_frame),
           offsetof(_PyInterpreterFrame, previous), offsetof(_PyInterpreterFrame, f_executable),
           offsetof(_PyInterpreterFrame, instr_ptr));
#endif
    printf(" fr_owner=%zu", offsetof(_PyInterpreterFrame, owner));
#if PY_VERSION_HEX < 0x030c0000
    printf(" fr_is_entry=%zu", offsetof(_PyInterpreterFrame, is_entry));
#else
    printf(" fr_is_entry=-");
#endif
    printf(" co_filename=%zu co_name=%zu co_firstlineno=%zu co_lines=%zu co_code=%zu",
           offsetof(PyCodeObject, co_filename), offsetof(PyCodeObject, co_qualname),
           offsetof(PyCodeObject, co_firstlineno), offsetof(PyCodeObject, co_linetable),
           offsetof(PyCodeObject, co_code_adaptive));
#endif
    printf(" ascii_data=%zu\n", sizeof(PyASCIIObject));
    return 0;
}
