#include "csystem_shim.h"
