// libbraid-fi.so's own translation unit; fi_prov_ini itself is in
// provider.cc (linked whole from braid_fi_core).
