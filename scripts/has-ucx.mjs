#!/usr/bin/env node
/**
 * Prints 1 when the UCX addon can be built here (UCX's headers are installed and CCJS_NO_UCX is not
 * 1), else 0: binding.gyp builds ccjs_ucx only then, so that installing without UCX stays green.
 */
import fs from 'node:fs';

const headers = ['/usr/include/ucp/api/ucp.h', '/usr/local/include/ucp/api/ucp.h'];
const wanted = process.env.CCJS_NO_UCX !== '1';
process.stdout.write(wanted && headers.some((file) => fs.existsSync(file)) ? '1' : '0');
