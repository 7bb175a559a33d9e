module myriad/gobench

go 1.21
