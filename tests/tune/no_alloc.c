/* SPDX-License-Identifier: MIT
 * A program that makes no allocation call: `tailor tune` must say there is
 * nothing to tune and write no config. */
int main(void) { return 0; }
