// Command testtool is test support for animus-subject-sqlite's end-to-end
// tests and benchmarks, never shipped: it touches the database file
// directly, as another program would, where going through the plugin
// would not do.
//
//	testtool seed -db PATH -n N [-kinds task]  insert N subjects with direct SQL
//	testtool hold -db PATH                      hold the write lock until stdin closes
//	testtool rustdb -db PATH                    create a database as the Rust plugin v0.1.4 leaves it
//
// seed migrates the file first (through the store package, as the plugin
// would) and then bulk-inserts in one transaction; its subjects cycle
// through the five statuses and priorities and carry one or two of eight
// labels.
package main
