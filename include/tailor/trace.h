// SPDX-License-Identifier: MIT
// The trace library: events, metadata, writer and reader of tailor's
// allocation traces (docs/trace-format.md).
#pragma once

#include "tailor/trace/event.h"
#include "tailor/trace/metadata.h"
#include "tailor/trace/reader.h"
#include "tailor/trace/writer.h"
